// pybind11 module `_racksim`: the library's public API for Python. Results are plain dicts with units
// in their keys, built from the same JSON the CLI prints, so Python and CLI answers are identical.
// InputError -> racksim.InputError (a ValueError), SimulationError -> racksim.SimulationError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_racksim, m) {
  m.doc() = "racksim: discrete-event simulator and performance model of NVLink rack-scale GPU systems";
  auto input_error = py::register_exception<racksim::InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception<racksim::SimulationError>(m, "SimulationError", PyExc_RuntimeError);
  (void)input_error;
  racksim::bindings::add_topology_bindings(m);
  racksim::bindings::add_collective_bindings(m);
  racksim::bindings::add_analytic_bindings(m);
  racksim::bindings::add_planner_bindings(m);
  racksim::bindings::add_failure_bindings(m);
  racksim::bindings::add_work_bindings(m);
}
