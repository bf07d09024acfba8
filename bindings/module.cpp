// pybind11 module `_racksim`: the library's public API for Python. Results are plain dicts with units
// in their keys, built from the same JSON the CLI prints, so Python and CLI answers are identical.
// InputError -> racksim.InputError (a ValueError, naming Python's arguments), SimulationError -> racksim.SimulationError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

namespace {
// The same error with the CLI's option named as the Python argument ("--step-s" -> "step_s"): the library's
// checks are shared by both interfaces and name the CLI's flags. An error naming anything else is returned as is.
racksim::InputError with_python_argument_name(const racksim::InputError& e) {
  if (e.where().rfind("--", 0) != 0) return e;
  std::string where = e.where().substr(2);
  for (char& ch : where)
    if (ch == '-') ch = '_';
  return racksim::InputError(where, e.json_path(), e.value(), e.allowed());
}
}  // namespace

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
      input_error(with_python_argument_name(e).what());
    }
  });
  racksim::bindings::add_topology_bindings(m);
  racksim::bindings::add_collective_bindings(m);
  racksim::bindings::add_analytic_bindings(m);
  racksim::bindings::add_planner_bindings(m);
  racksim::bindings::add_failure_bindings(m);
  racksim::bindings::add_work_bindings(m);
}
