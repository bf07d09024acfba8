// racksim.jobs() and racksim.goodput(): job mixes with failures and training goodput from Python, the same
// library calls and JSON writers as `racksim jobs --format json` / `racksim goodput --format json`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "models/failures/goodput_setup.hpp"
#include "models/jobs/job_runner.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {

std::vector<std::string> items_arg(const py::object& value, const std::string& where) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (py::isinstance<py::str>(value)) return {value.cast<std::string>()};
  if (!py::isinstance<py::sequence>(value)) throw InputError(where, "", py::repr(value).cast<std::string>(), "a string or a list of strings");
  for (const auto& item : value.cast<py::sequence>()) {
    if (!py::isinstance<py::str>(item)) throw InputError(where, "", py::repr(item).cast<std::string>(), "strings");
    out.push_back(item.cast<std::string>());
  }
  return out;
}

py::object jobs(const py::object& mix, const py::object& fail, const py::object& partition_mode, const py::object& restart_s) {
  JobMix m;
  if (py::isinstance<py::dict>(mix)) {
    m = job_mix_from_json_text(py::module_::import("json").attr("dumps")(mix).cast<std::string>(), "mix (dict)");
  } else if (py::hasattr(mix, "__fspath__") || py::isinstance<py::str>(mix)) {
    m = load_job_mix(py::str(py::hasattr(mix, "__fspath__") ? mix.attr("__fspath__")() : mix).cast<std::string>());
  } else {
    throw InputError("mix", "", py::repr(mix).cast<std::string>(), "a job-mix dict or a JSON file path");
  }
  if (const auto mode = optional_string_arg(partition_mode, "partition_mode", "None, 'full-bandwidth' or 'adaptive-bandwidth'"))
    m.mode = partition_mode_from_string(*mode, "partition_mode");
  const std::vector<std::string> items = items_arg(fail, "fail");
  for (const auto& i : items) parse_failure_item(i);
  RecoveryTimes rt;
  if (const auto given = optional_number_arg(restart_s, "restart_s", "None (600 s, an assumption) or seconds in [0, 1e7]")) {
    const double s = *given;
    if (!(s >= 0 && s <= 1e7)) throw InputError("restart_s", "", std::to_string(s), "seconds in [0, 1e7]");
    rt.restart = {s, "given (restart_s)"};
  }
  std::string text;
  {
    py::gil_scoped_release release;
    text = mix_result_to_json_text(run_job_mix(m, items, "", rt));
  }
  return json_loads(text);
}

// A goodput option that None leaves to its default: a number (its range is checked where the setup is read).
std::optional<double> opt_number(const py::object& v, const std::string& name, const std::string& none_means) {
  return optional_number_arg(v, name, "None (" + none_means + ") or a number");
}

py::object goodput(int gpus, const std::string& system, const std::string& unit, int spare_trays, int hot_spares,
                   const py::object& step_s, const py::object& checkpoint_bytes, const std::string& model, int global_batch,
                   int seq_len, double storage_GBps, const py::object& interval_s, const py::object& restart_s,
                   const py::object& repair_h, const py::object& switch_repair_h, const std::string& partition_mode,
                   double adaptive_slowdown, double days, int trials, std::uint64_t seed, bool compare,
                   const py::object& client, const py::object& progress) {
  GoodputCall c;
  c.setup.system = system;
  c.setup.unit = unit;
  c.setup.gpus = gpus;
  c.setup.spare_trays = spare_trays;
  c.setup.hot_spares = hot_spares;
  c.setup.step_s = opt_number(step_s, "step_s", "the planner's, with model");
  if (!checkpoint_bytes.is_none()) c.setup.checkpoint_bytes = static_cast<double>(bytes_arg(checkpoint_bytes, "checkpoint_bytes"));
  c.setup.model = model;
  c.setup.global_batch = global_batch;
  c.setup.seq_len = seq_len;
  c.setup.storage_GBps_per_gpu = storage_GBps;
  c.interval_s = opt_number(interval_s, "interval_s", "Daly's optimum");
  c.restart_s = opt_number(restart_s, "restart_s", "600 s, an assumption");
  c.repair_h = opt_number(repair_h, "repair_h", "24 h, an assumption");
  c.switch_repair_h = opt_number(switch_repair_h, "switch_repair_h", "4 h, an assumption");
  c.partition_mode = partition_mode;
  c.adaptive_slowdown = adaptive_slowdown;
  c.days = days;
  c.trials = trials;
  c.seed = seed;
  c.compare = compare;
  std::string text;
  if (!client.is_none()) {
    // The Monte Carlo's trials in ranges on the Client's workers (racksim/work.py, docs/dask.md): each trial
    // has its own seed, so the result is the local one, byte for byte.
    std::vector<GoodputRequest> requests;
    std::vector<std::string> units;
    {
      py::gil_scoped_release release;
      requests = goodput_call_requests(c);
      units = goodput_units(requests);
    }
    const std::vector<std::string> results = run_units(units, client, progress, "goodput");
    py::gil_scoped_release release;
    text = goodput_to_json_text(goodput_unit_results(requests, results));
  } else {
    py::gil_scoped_release release;
    text = goodput_to_json_text(run_goodput_call(c));
  }
  return json_loads(text);
}

}  // namespace

void add_failure_bindings(py::module_& m) {
  m.def("jobs", &jobs, py::arg("mix"), py::arg("fail") = py::none(), py::arg("partition_mode") = py::none(),
        py::arg("restart_s") = py::none(),
        R"(Run a job mix (a dict or a JSON file, as `racksim jobs FILE --format json`): every job alone and all
together on the engine, the links they shared, and with failures (the mix's "failures" plus `fail`) each
job's fate: "continues", "dies" or "restarts", its time after, and back_after_s until it runs again.
Times in microseconds (*_us), slowdowns as fractions. Raises racksim.InputError on bad input.)");
  m.def("goodput", &goodput, py::arg("gpus"), py::arg("system") = "gb200-nvl72", py::arg("unit") = "rack",
        py::arg("spare_trays") = 0, py::arg("hot_spares") = 0, py::arg("step_s") = py::none(),
        py::arg("checkpoint_bytes") = py::none(), py::arg("model") = "", py::arg("global_batch") = 0,
        py::arg("seq_len") = 0, py::arg("storage_GBps") = 1.0, py::arg("interval_s") = py::none(),
        py::arg("restart_s") = py::none(), py::arg("repair_h") = py::none(), py::arg("switch_repair_h") = py::none(),
        py::arg("partition_mode") = "full-bandwidth", py::arg("adaptive_slowdown") = 0.05, py::arg("days") = 30.0,
        py::arg("trials") = 200, py::arg("seed") = 1, py::arg("compare") = false, py::arg("client") = py::none(),
        py::arg("progress") = py::none(),
        R"(Training goodput under failures (as `racksim goodput --format json`): a list with one dict per allocation
(three with compare=True: GB200 NVL72 racks, NVL72 partitions of 9 trays, HGX B200 nodes). Keys: analytic_goodput,
mc_goodput, mc_standard_error, p5/p50/p95 (fractions), mtbf_h, interval_s, checkpoint_write_s, lost_hours,
rates (per hour, with sources). The same seed gives identical results. client: a dask.distributed Client
to run the trials on its workers (in ranges; identical result, byte for byte: docs/dask.md); progress: a
tqdm bar of those ranges (None: only when stderr is a terminal).)");
}

}  // namespace racksim::bindings
