#pragma once
// One add_* function per area, each in its own file (topology.cpp, collective.cpp, ...).
#include <pybind11/pybind11.h>

namespace racksim::bindings {
void add_topology_bindings(pybind11::module_& m);
void add_collective_bindings(pybind11::module_& m);  // System.collective, System.sweep
void add_analytic_bindings(pybind11::module_& m);    // analytic, fig4, fig4_model
void add_planner_bindings(pybind11::module_& m);     // plan
void add_failure_bindings(pybind11::module_& m);     // jobs, goodput
}  // namespace racksim::bindings
