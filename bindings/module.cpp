// pybind11 module `_racksim`: the library's public API for Python. Results are plain dicts with units
// in their keys, built from the same JSON the CLI prints, so Python and CLI answers are identical.
// InputError -> racksim.InputError (a ValueError, naming Python's arguments), SimulationError -> racksim.SimulationError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_racksim, m) {
  m.doc() = "racksim: discrete-event simulator and performance model of NVLink rack-scale GPU systems";
  py::register_exception<racksim::SimulationError>(m, "SimulationError", PyExc_RuntimeError);
  // The library's checks are shared with the CLI and name its flags ("--step-s"); from Python the argument is
  // named as Python spells it ("step_s: invalid value nan"). Registered by hand rather than with
  // register_exception so that the message can be renamed on the way out.
  static py::exception<racksim::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const racksim::InputError& e) {
      input_error(racksim::bindings::with_python_argument_name(e).what());
    }
  });
  racksim::bindings::add_topology_bindings(m);
  racksim::bindings::add_collective_bindings(m);
  racksim::bindings::add_analytic_bindings(m);
  racksim::bindings::add_planner_bindings(m);
  racksim::bindings::add_failure_bindings(m);
  racksim::bindings::add_work_bindings(m);
}
