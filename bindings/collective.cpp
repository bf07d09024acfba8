// System.collective() and System.sweep(): the discrete-event engine from Python, the same library calls
// and the same JSON writer as `racksim collective` / `racksim sweep`, so the values are identical.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "bindings/system_handle.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {

using SystemClass = py::class_<SystemHandle, std::shared_ptr<SystemHandle>>;

RunResult run_one(const SystemHandle& s, const CollectiveRequest& request, const Calibration& calibration,
                  const FailureScenario& failures, bool trace) {
  RunOptions options;
  options.record_trace = trace;
  // Each run is a forked engine process (sim/engine/engine_process.hpp); Python threads go on meanwhile.
  py::gil_scoped_release release;
  return simulate_collective(*s.graph, request, calibration, failures, options);
}

py::object collective(const SystemHandle& s, const std::string& op, int gpus, const py::object& bytes,
                      const std::string& algo, const py::object& fail, const py::object& calibration,
                      const py::object& chunk_bytes, const py::object& inner, const py::object& outer,
                      const py::object& trace) {
  const CollectiveRequest request = make_request(*s.graph, op, gpus, bytes_arg(bytes, "bytes"), algo,
                                                 chunk_bytes_arg(chunk_bytes), inner, outer);
  const Calibration cal = calibration_arg(calibration);
  const FailureScenario failures = failures_arg(fail);
  const RunResult result = run_one(s, request, cal, failures, !trace.is_none());
  if (!trace.is_none()) {
    const std::string text = run_result_to_trace_json(result);
    py::module_::import("pathlib").attr("Path")(trace).attr("write_text")(text);
  }
  return result_dict(result);
}

// nccl-tests' size sequence: min, min * f, min * f^2, ... while <= max.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes, double step_factor) {
  if (min_bytes == 0) throw InputError("min_bytes", "", "0", "a positive byte count");
  if (max_bytes < min_bytes)
    throw InputError("max_bytes", "", std::to_string(max_bytes), ">= min_bytes (" + std::to_string(min_bytes) + ")");
  if (!(step_factor > 1.0) || step_factor > 1e6)
    throw InputError("step_factor", "", std::to_string(step_factor), "a factor > 1 (2 = double each step)");
  std::vector<std::uint64_t> sizes;
  for (double size = static_cast<double>(min_bytes); size <= static_cast<double>(max_bytes); size *= step_factor) {
    const auto b = static_cast<std::uint64_t>(size);
    if (sizes.empty() || b != sizes.back()) sizes.push_back(b);
  }
  return sizes;
}

py::object sweep(const SystemHandle& s, const std::string& op, int gpus, const py::object& min_bytes,
                 const py::object& max_bytes, double step_factor, const std::string& algo, const py::object& fail,
                 const py::object& calibration, const py::object& chunk_bytes, const py::object& inner,
                 const py::object& outer) {
  const auto sizes = sweep_sizes(bytes_arg(min_bytes, "min_bytes"), bytes_arg(max_bytes, "max_bytes"), step_factor);
  CollectiveRequest request =
      make_request(*s.graph, op, gpus, sizes.front(), algo, chunk_bytes_arg(chunk_bytes), inner, outer);
  const Calibration cal = calibration_arg(calibration);
  const FailureScenario failures = failures_arg(fail);
  std::vector<RunResult> rows;
  rows.reserve(sizes.size());
  for (const std::uint64_t size : sizes) {
    request.bytes = size;
    rows.push_back(run_one(s, request, cal, failures, false));
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C between points
  }
  const py::object records = json_loads(run_results_to_json_text(rows));
  return py::module_::import("pandas").attr("DataFrame")(records);
}

}  // namespace

void add_collective_bindings(py::module_& m) {
  auto cls = py::reinterpret_borrow<SystemClass>(m.attr("System"));
  cls.def("collective", &collective, py::arg("op"), py::arg("gpus"), py::arg("bytes"), py::arg("algo") = "auto",
          py::arg("fail") = py::none(), py::arg("calibration") = py::none(), py::arg("chunk_bytes") = py::none(),
          py::arg("inner") = py::none(), py::arg("outer") = py::none(), py::arg("trace") = py::none(),
          R"(Simulate one collective in the discrete-event engine (as `racksim collective --format json`).

op: all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | send_recv.
gpus: number of ranks, placed in order over the trays; with R racks each rack gets gpus / R.
bytes: nccl-tests' size in bytes (all_reduce: per-rank buffer; all_gather: output buffer; all_to_all:
  per-rank send buffer), an int or a string such as "64K", "512M", "1G" (binary) or "100GB" (decimal).
algo: auto | ring | nvls | tree | hierarchical | direct (auto reports its pick in 'algo' and 'algo_note').
fail: a failure item or a list: "tray:T", "switch-tray:S", "switch-chip:D.C", "nic:N", "link:NAME[@F]".
calibration: None (the shipped default), "none" (vendor peaks), a calibration JSON path, or a dict.
chunk_bytes: pipelining chunk in bytes (None: the algorithm's default).
inner, outer: hierarchical's in-domain (auto | ring | nvls) and cross-domain (ring | tree) algorithms.
trace: a path; writes a Chrome/Perfetto trace of the run there.

Returns the CLI's JSON as a dict: time_us (microseconds), algbw_GBps and busbw_GBps (1e9 bytes/s,
nccl-tests' rules), bytes, chunk_bytes (bytes), phases [{name, time_us}], links [{kind, links, bytes,
max_utilization}], calibration, failures. Raises racksim.InputError (a ValueError) on bad input and
racksim.SimulationError when the run cannot happen (e.g. a rank on a failed tray).)");

  cls.def("sweep", &sweep, py::arg("op"), py::arg("gpus"), py::arg("min_bytes") = 8,
          py::arg("max_bytes") = py::str("16G"), py::arg("step_factor") = 2.0, py::arg("algo") = "auto",
          py::arg("fail") = py::none(), py::arg("calibration") = py::none(), py::arg("chunk_bytes") = py::none(),
          py::arg("inner") = py::none(), py::arg("outer") = py::none(),
          R"(Simulate a collective at sizes min_bytes, min_bytes * step_factor, ... <= max_bytes (nccl-tests'
sequence, as `racksim sweep --format json`). Sizes are bytes (int or "64K", "1G"); the other arguments
as in collective(). Returns a pandas.DataFrame, one row per size, with the columns of collective()'s
dict: bytes, time_us (microseconds), algbw_GBps, busbw_GBps (1e9 bytes/s), algo, phases, links, ...)");
}

}  // namespace racksim::bindings
