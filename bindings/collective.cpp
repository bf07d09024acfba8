// System.collective() and System.sweep(): the discrete-event engine from Python, the same library calls
// and the same JSON writer as `racksim collective` / `racksim sweep`, so the values are identical.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "bindings/system_handle.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/errors.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "models/work/work_units.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {

// The arguments among `asked` (name, given) that were given: what only the engine honours (check_model_choice).
std::vector<std::string> given(const std::vector<std::pair<const char*, bool>>& asked) {
  std::vector<std::string> out;
  for (const auto& [name, is_given] : asked)
    if (is_given) out.push_back(name);
  return out;
}

using SystemClass = py::class_<SystemHandle, std::shared_ptr<SystemHandle>>;

RequestArgs request_args(const std::string& op, int gpus, std::uint64_t bytes, const std::string& algo,
                         const py::object& chunk_bytes, const py::object& inner, const py::object& outer,
                         const std::string& dtype, const py::object& root, const std::string& protocol, const py::object& channels,
                         bool nvls, bool collnet, const std::string& nccl_version, int ib_qps_per_connection) {
  RequestArgs a;
  a.ib_qps_per_connection = ib_qps_per_connection;
  a.protocol = protocol;
  a.channels = channels_arg(channels);
  a.nvls = nvls;
  a.collnet = collnet;
  a.nccl_version = nccl_version;
  a.op = op;
  a.gpus = gpus;
  a.bytes = bytes;
  a.algo = algo;
  a.chunk_bytes = chunk_bytes_arg(chunk_bytes);
  a.inner = inner;
  a.outer = outer;
  a.dtype = dtype;
  if (!root.is_none()) a.root = optional_int_arg(root, "root", 0, 1 << 30, 0, "rank 0");
  return a;
}

py::object collective(const SystemHandle& s, const std::string& op, int gpus, const py::object& bytes,
                      const std::string& algo, const py::object& fail, const py::object& calibration,
                      const py::object& chunk_bytes, const py::object& inner, const py::object& outer,
                      const std::string& dtype, const py::object& root, const py::object& trace, const std::string& partition_mode,
                      const std::string& protocol, const py::object& channels, bool nvls, bool aggregate,
                      bool collnet, const std::string& nccl_version, int ib_qps_per_connection, const std::string& model) {
  // As `racksim collective --model`: the closed form has no failures, timeline or aggregation.
  const bool engine_only = check_model_choice(
      "model", model, given({{"fail=", !fail.is_none()}, {"trace=", !trace.is_none()}, {"aggregate=False", !aggregate}}));
  const CollectiveRequest request = make_request(
      *s.graph, request_args(op, gpus, bytes_arg(bytes, "bytes"), algo, chunk_bytes, inner, outer, dtype, root, protocol,
                             channels, nvls, collnet, nccl_version, ib_qps_per_connection));
  const Calibration cal = calibration_arg(calibration);
  const FailureScenario failures = failures_arg(fail, partition_mode);
  RunOptions options;
  options.record_trace = !trace.is_none();
  options.aggregate = aggregate;
  // Opened before the run (a bad path fails first), renamed into place only if the run succeeds.
  std::optional<AtomicFile> trace_file;
  if (!trace.is_none()) trace_file.emplace(py::module_::import("os").attr("fspath")(trace).cast<std::string>(), "trace");
  RunResult result;
  {
    // As `racksim collective`: the Simulation checks the failure items, then the schedule is built and run.
    // Each run is a forked engine process (sim/engine/engine_process.hpp); other Python threads go on.
    py::gil_scoped_release release;
    if (model == "analytic") {
      result = analytic_run_result(*s.graph, request, cal, "the closed form (model='analytic'): the engine did not run");
    } else {
      const Simulation simulation(*s.graph, cal, failures);
      try {
        const Schedule schedule = schedule_for_engine(simulation, *s.graph, request, cal, options);  // as `racksim collective`
        result = simulation.run(schedule, options);
        note_coarse_pipeline(result, schedule, *s.graph, cal);
      } catch (const EngineLimitError& e) {
        if (model != "auto" || engine_only) throw;
        result = analytic_run_result(*s.graph, request, cal, engine_refusal_note(e));
      }
    }
  }
  if (trace_file) {
    trace_file->write(run_result_to_trace_json(result));
    trace_file->commit();
  }
  return result_dict(result);
}

py::object sweep(const SystemHandle& s, const std::string& op, int gpus, const py::object& min_bytes,
                 const py::object& max_bytes, double step_factor, const std::string& algo, const py::object& fail,
                 const py::object& calibration, const py::object& chunk_bytes, const py::object& inner,
                 const py::object& outer, const std::string& dtype, const py::object& root, const py::object& jobs_arg,
                 const std::string& partition_mode, const std::string& protocol, const py::object& channels, bool nvls,
                 const py::object& client, const py::object& progress, bool collnet, const std::string& nccl_version,
                 int ib_qps_per_connection, const std::string& model) {
  // None: as `racksim sweep`, this machine's cores (default_engine_jobs).
  const int jobs = optional_int_arg(jobs_arg, "jobs", 1, 64, default_engine_jobs(), "this machine's cores, at most 4");
  // As `racksim sweep --model`: the closed form has no failures and runs no engine processes.
  const bool engine_only = check_model_choice(
      "model", model,
      given({{"fail=", !fail.is_none()}, {"client=", !client.is_none()}, {"jobs > 1", !jobs_arg.is_none() && jobs != 1}}));
  const auto asked = sweep_sizes(bytes_arg(min_bytes, "min_bytes"), bytes_arg(max_bytes, "max_bytes"), step_factor,
                                 {"min_bytes", "max_bytes", "step_factor"});
  RequestArgs args = request_args(op, gpus, asked.back(), algo, chunk_bytes, inner, outer, dtype, root, protocol, channels, nvls,
                                  collnet, nccl_version, ib_qps_per_connection);
  args.bytes_name = "max_bytes";
  const CollectiveRequest base = make_request(*s.graph, args);
  // As `racksim sweep`: the sizes nccl-tests runs, those below one element per rank left out
  const auto sizes = nccl_tests_sizes(asked, base.op, dtype_size_bytes(base.dtype), static_cast<int>(base.gpus.size()), "min_bytes");
  const Calibration cal = calibration_arg(calibration);
  const FailureScenario failures = failures_arg(fail, partition_mode);
  std::vector<RunResult> results(sizes.size());
  const auto request_of = [&base](std::uint64_t size) {
    CollectiveRequest r = base;
    r.bytes = size;
    return r;
  };
  if (model == "analytic") {
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      results[i] = analytic_run_result(*s.graph, request_of(sizes[i]), cal,
                                       "the closed form (model='analytic'): the engine did not run");
  } else if (!client.is_none()) {
    // On a Dask cluster: one work unit per size, results back in order (racksim/work.py, docs/dask.md).
    std::vector<CollectiveRequest> requests;
    for (const std::uint64_t size : sizes) {
      CollectiveRequest r = base;
      r.bytes = size;
      requests.push_back(r);
    }
    {
      py::gil_scoped_release release;
      const Simulation check(*s.graph, cal, failures);   // bad failure items and
      build_schedule(requests.front(), *s.graph, cal);  // bad requests fail here, not on a worker
    }
    results = collective_unit_results(run_units(collective_units(*s.graph, cal, failures, requests), client, progress, "sweep"));
  } else {
    py::object bar = progress_bar(sizes.size(), progress, "sweep");
    std::size_t shown = 0;
    const auto update = [&bar, &shown](std::size_t done) {
      if (bar.is_none()) return;
      py::gil_scoped_acquire acquire;
      bar.attr("update")(done - shown);
      shown = done;
    };
    py::gil_scoped_release release;
    const Simulation simulation(*s.graph, cal, failures);
    // model "auto": a size over the engine's memory budget is priced by the closed form in its place.
    std::vector<Schedule> schedules;
    std::vector<std::size_t> engine_rows;
    schedules.reserve(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      try {
        // Bad input fails before any run; the quotient where the algorithm has one (as `racksim sweep`).
        schedules.push_back(schedule_for_engine(simulation, *s.graph, request_of(sizes[i]), cal, RunOptions{}));
        engine_rows.push_back(i);
      } catch (const EngineLimitError& e) {
        if (model != "auto" || engine_only) throw;
        results[i] = analytic_run_result(*s.graph, request_of(sizes[i]), cal, engine_refusal_note(e));
      }
    }
    // Up to `jobs` engine processes at once, forked from this thread, never from threads (as `racksim
    // sweep --jobs`; in a multi-threaded interpreter the engine server forks them: engine_process.hpp).
    std::vector<const Schedule*> pointers;
    for (const auto& sc : schedules) pointers.push_back(&sc);
    std::vector<RunResult> ran = simulation.run_each(pointers, jobs, {}, update);
    for (std::size_t k = 0; k < ran.size(); ++k) {
      note_coarse_pipeline(ran[k], schedules[k], *s.graph, cal);
      results[engine_rows[k]] = std::move(ran[k]);
    }
    py::gil_scoped_acquire acquire;
    if (!bar.is_none()) bar.attr("close")();
  }
  const py::object records = json_loads(run_results_to_json_text(results));
  return py::module_::import("pandas").attr("DataFrame")(records);
}

}  // namespace

void add_collective_bindings(py::module_& m) {
  auto cls = py::reinterpret_borrow<SystemClass>(m.attr("System"));
  cls.def("collective", &collective, py::arg("op"), py::arg("gpus"), py::arg("bytes"), py::arg("algo") = "auto",
          py::arg("fail") = py::none(), py::arg("calibration") = "default", py::arg("chunk_bytes") = py::none(),
          py::arg("inner") = py::none(), py::arg("outer") = py::none(), py::arg("dtype") = "float",
          py::arg("root") = py::none(), py::arg("trace") = py::none(), py::arg("partition_mode") = "full-bandwidth",
          py::arg("protocol") = "auto", py::arg("channels") = py::none(), py::arg("nvls") = true,
          py::arg("aggregate") = true, py::arg("collnet") = false, py::arg("nccl_version") = "2.28",
          py::arg("ib_qps_per_connection") = 0, py::arg("model") = "auto",
          R"(Simulate one collective in the discrete-event engine (as `racksim collective --format json`).

op: all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | reduce | send_recv.
gpus: number of ranks, placed in order over the trays; with R racks each rack gets gpus / R.
bytes: nccl-tests' size in bytes (all_reduce: per-rank buffer; all_gather: output buffer; all_to_all:
  per-rank send buffer), an int or a string such as "64K", "512M", "1G" (binary) or "100GB" (decimal).
algo: auto (what NCCL 2.28 would run) | ring | tree | nvls | nvls_tree | collnet_direct | collnet_chain | nvls_collnet |
  hierarchical | direct, like NCCL_ALGO (CollNet only when named or with collnet=True, as NCCL_COLLNET_ENABLE)
  (the result reports the algorithm, protocol and channels that ran, and NCCL's candidates in 'algo_note').
protocol: auto | LL | LL128 | Simple (NCCL_PROTO); channels: None or 1-64 (NCCL_MIN/MAX_NCHANNELS);
nvls: False keeps auto off NVLS and NVLS-tree (NCCL_NVLS_ENABLE=0).
collnet: True lets auto pick CollNet (IB SHARP) and NVLS over CollNet across nodes (NCCL_COLLNET_ENABLE=1).
nccl_version: the NCCL whose tuner decides and prices the run: "2.28" (default) or a version from 2.18 on as
  NCCL prints it ("2.27.3"); 2.18-2.27 take NCCL 2.27's tuner tables (2.18-2.24, older than them, with a warning
  saying how near), 2.29 2.29's, 2.30 and later 2.30's.
ib_qps_per_connection: queue pairs of each InfiniBand / RoCE connection across nodes, 0 (NCCL's default, one)
  or 1-128 (NCCL_IB_QPS_PER_CONNECTION); each moves at most a calibrated share of its NIC (docs/model.md).
fail: a failure item or a list: "tray:T", "gpu:G", "switch-tray:S", "switch-chip:D.C", "nvlink:G.C",
  "trunk:D.K", "nic:N", "ib-link:R.K", "imex:T", "link:NAME[@F]" (docs/failures.md).
partition_mode: "full-bandwidth" (NVIDIA's default: a GPU that lost NVLinks is parked, a lost switch stops
  the partition) or "adaptive-bandwidth" (every GPU runs on the links left).
calibration: "default" (the shipped calibration), "none" (vendor peaks), a calibration JSON path, or a dict.
chunk_bytes: pipelining chunk in bytes (None: the algorithm's default).
inner, outer: hierarchical's in-domain (auto | ring | nvls) and cross-domain (ring | tree | sharp) algorithms.
dtype: element type (float, half, bfloat16, double, int8, ...: nccl-tests' count column, reduction cost).
root: broadcast / reduce root, send_recv first rank (None: rank 0; refused for an op without a root).
trace: a path; writes a Chrome/Perfetto trace of the run there.
aggregate: True (default): the engine simulates each class of symmetric copies once (exact; the full run
  where symmetry is weak; 'engine' in the result says which ran); False: every transfer, the reference.
model: "auto" (default): the engine, or the closed form (System.analytic's numbers) where the engine will not run
  the request (over its memory or time budget), with engine.mode "analytic" and the engine's refusal in
  engine.note; "engine": that refusal raises racksim.InputError instead; "analytic": the closed form. With fail=,
  trace= or aggregate=False (which the closed form cannot honour) "analytic" is refused and "auto" keeps the refusal.

Returns the CLI's JSON as a dict: time_us (microseconds), algbw_GBps and busbw_GBps (1e9 bytes/s,
nccl-tests' rules), bytes, chunk_bytes (bytes), phases [{name, time_us}], links [{kind, links, bytes,
max_utilization}], calibration, failures. Raises racksim.InputError (a ValueError) on bad input and
racksim.SimulationError when the run cannot happen (e.g. a rank on a failed tray).)");

  cls.def("sweep", &sweep, py::arg("op"), py::arg("gpus"), py::arg("min_bytes") = 8,
          py::arg("max_bytes") = py::str("16G"), py::arg("step_factor") = 2.0, py::arg("algo") = "auto",
          py::arg("fail") = py::none(), py::arg("calibration") = "default", py::arg("chunk_bytes") = py::none(),
          py::arg("inner") = py::none(), py::arg("outer") = py::none(), py::arg("dtype") = "float",
          py::arg("root") = py::none(), py::arg("jobs") = py::none(), py::arg("partition_mode") = "full-bandwidth",
          py::arg("protocol") = "auto", py::arg("channels") = py::none(), py::arg("nvls") = true,
          py::arg("client") = py::none(), py::arg("progress") = py::none(), py::arg("collnet") = false,
          py::arg("nccl_version") = "2.28", py::arg("ib_qps_per_connection") = 0, py::arg("model") = "auto",
          R"(Simulate a collective at sizes min_bytes, min_bytes * step_factor, ... <= max_bytes (nccl-tests'
sequence, as `racksim sweep --format json`). Sizes are bytes (int or "64K", "1G"); jobs: engine
processes run at once (as --jobs; None: this machine's cores, at most 4); client: a dask.distributed Client to run the sizes on
its workers instead (one unit per size; the result is identical, byte for byte: docs/dask.md); progress:
a tqdm bar on stderr (None: only when stderr is a terminal; True; False); model: as in collective(), per size
("auto" prices the sizes the engine will not run by the closed form; "analytic" refuses fail=, client= and jobs > 1);
the other arguments as in collective(). Returns a pandas.DataFrame, one row per size, with the columns of collective()'s
dict: bytes, time_us (microseconds), algbw_GBps, busbw_GBps (1e9 bytes/s), algo, phases, links, ...)");
}

}  // namespace racksim::bindings
