// _racksim.run_work_unit(): one work unit (models/work/work_units.hpp) run in this process: what a Dask
// worker calls (racksim/work.py). And the two helpers through which the bindings hand units to a Client.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

namespace racksim::bindings {

std::vector<std::string> run_units(const std::vector<std::string>& units, const py::object& client,
                                   const py::object& progress, const std::string& desc) {
  return py::module_::import("racksim.work").attr("run_units")(client, units, progress, desc).cast<std::vector<std::string>>();
}

py::object progress_bar(std::size_t total, const py::object& progress, const std::string& desc) {
  if (!progress.is_none() && !is_a_bool(progress))
    throw InputError("progress", "", py::repr(progress).cast<std::string>(),
                     "None (a bar only when stderr is a terminal), True or False");
  if (!progress.is_none() && !progress.cast<bool>()) return py::none();  // False: no import at all
  return py::module_::import("racksim.work").attr("progress_bar")(total, progress, desc);
}

void add_work_bindings(py::module_& m) {
  m.def(
      "run_work_unit",
      [](const std::string& unit) {
        py::gil_scoped_release release;
        return run_work_unit(unit);
      },
      py::arg("unit"),
      "Run one work unit (JSON text made by a sweep or goodput call with client=) and return its result as text "
      "(the exact bytes, hex-encoded). What racksim.work.run_unit calls on a Dask worker (docs/dask.md).");
}

}  // namespace racksim::bindings
