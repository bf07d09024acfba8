#pragma once
// One add_* function per area, each in its own file (topology.cpp, collective.cpp, ...).
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <vector>

namespace racksim::bindings {
void add_topology_bindings(pybind11::module_& m);
void add_collective_bindings(pybind11::module_& m);  // System.collective, System.sweep
void add_analytic_bindings(pybind11::module_& m);    // analytic, fig4, fig4_model
void add_planner_bindings(pybind11::module_& m);     // plan
void add_failure_bindings(pybind11::module_& m);     // jobs, goodput
void add_work_bindings(pybind11::module_& m);        // run_work_unit

// Work units (models/work/work_units.hpp) run on a dask.distributed Client's workers, results in the
// units' order (racksim/work.py: run_units). Needs the GIL.
std::vector<std::string> run_units(const std::vector<std::string>& units, const pybind11::object& client,
                                   const pybind11::object& progress, const std::string& desc);
// A tqdm bar of `total` steps on stderr, or None: progress None = only when stderr is a terminal,
// True = always (if tqdm is installed), False = never (racksim/work.py: progress_bar). Needs the GIL.
pybind11::object progress_bar(std::size_t total, const pybind11::object& progress, const std::string& desc);
}  // namespace racksim::bindings
