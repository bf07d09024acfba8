// racksim.plan(): the layout planner from Python. The same library call (run_plan) and the same JSON
// writer (plan_to_json_text) as `racksim plan --format json`, so the dict holds exactly the CLI's values.
// Arguments take the CLI's values (schedule "1f1b", zero 0-3 or "auto", compare "a,b" or a list, ...).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "models/planner/plan.hpp"
#include "models/planner/plan_report.hpp"
#include "models/planner/training_fit.hpp"
#include "sim/core/errors.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {

std::string one_of(const std::string& where, const std::string& value, const std::set<std::string>& allowed) {
  if (allowed.count(value)) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw InputError(where, "", "'" + value + "'", "one of " + list);
}

// A str path-like (pathlib.Path) or a str: the system or model argument as the CLI's --system/--model.
std::string name_or_path(const py::object& value, const std::string& where) {
  if (py::hasattr(value, "__fspath__")) return py::str(value.attr("__fspath__")()).cast<std::string>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  throw InputError(where, "", py::repr(value).cast<std::string>(), "an id (str) or a JSON file path");
}

// None or "none" -> no comparison; "a,b" as --compare; or a list of ids.
std::vector<std::string> compare_arg(const py::object& value) {
  std::vector<std::string> out;
  if (value.is_none()) return out;
  if (py::isinstance<py::str>(value)) {
    const std::string text = value.cast<std::string>();
    if (text == "none") return out;
    std::string item;
    for (const char ch : text + ",") {
      if (ch != ',') {
        item += ch;
      } else if (!item.empty()) {
        out.push_back(item);
        item.clear();
      }
    }
    return out;
  }
  try {
    return value.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    throw InputError("compare", "", py::repr(value).cast<std::string>(),
                     "None, 'none', comma-separated system ids, or a list of system ids");
  }
}

// zero: "auto", or 0-3 as int or str.
std::optional<int> zero_arg(const py::object& value) {
  const std::string text = py::str(value).cast<std::string>();
  if (text == "auto") return std::nullopt;
  if (text == "0" || text == "1" || text == "2" || text == "3") return std::stoi(text);
  throw InputError("zero", "", py::repr(value).cast<std::string>(), "'auto' or a ZeRO stage 0, 1, 2 or 3");
}

py::object plan(const py::object& system, std::optional<int> racks, const py::object& model, int global_batch,
                int seq_len, int top, int engine_top, std::optional<int> gpus, std::optional<int> tp, std::optional<int> cp,
                std::optional<int> pp, std::optional<int> dp, std::optional<int> ep, std::optional<int> etp,
                std::optional<int> edp, std::optional<int> vp, std::optional<int> tp_x_ep, std::optional<int> micro_batch,
                const std::string& pp_layout, const std::string& mesh_order, const std::string& schedule, const py::object& zero, std::optional<int> fsdp,
                const std::string& recompute, const std::string& offload, const std::string& precision, std::optional<double> moe_imbalance,
                bool force_balanced, const std::string& moe_dispatcher, bool ep_overlap, bool mtp, const std::string& grad_dtype,
                double memory_reserve, const py::object& compare, bool failures, const std::string& calibration,
                const std::string& compute_fit) {
  // As cli/cmd_plan.cpp's callback, option for option.
  PlanRequest req;
  req.system = name_or_path(system, "system");
  req.racks = racks;
  req.model = name_or_path(model, "model");
  req.job.global_batch = global_batch;
  req.job.seq_len = seq_len;
  req.precision = precision;
  req.job.moe_imbalance = force_balanced ? 1.0 : moe_imbalance.value_or(req.job.moe_imbalance);  // None: the CLI's 1.2
  one_of("moe_dispatcher", moe_dispatcher, {"alltoall", "deepep", "hybridep"});
  req.job.dispatcher = moe_dispatcher == "deepep" ? MoeDispatcher::deepep
                       : moe_dispatcher == "hybridep" ? MoeDispatcher::hybridep
                                                      : MoeDispatcher::alltoall;
  req.job.ep_overlap = ep_overlap;
  // As the CLI: MoE options given for a model without routed experts are refused (moe_imbalance: given, not None).
  for (const auto& [name, given] : {std::pair{"--ep-overlap", ep_overlap}, std::pair{"--force-balanced", force_balanced},
                                    std::pair{"--moe-dispatcher", moe_dispatcher != "alltoall"}, std::pair{"--moe-imbalance", moe_imbalance.has_value()}})
    if (given) req.moe_options_given.emplace_back(name);
  req.job.mtp = mtp;
  req.job.memory_reserve = memory_reserve;
  req.job.grad_bytes = one_of("grad_dtype", grad_dtype, {"fp32", "bf16"}) == "bf16" ? 2 : 4;
  req.gpus = gpus;
  req.top = top;
  req.engine_top = engine_top;
  req.calibration = calibration;
  req.compute_fit = compute_fit;
  req.compare = compare_arg(compare);
  req.failures = failures;
  SearchConstraints& c = req.constraints;
  c.tp = tp, c.cp = cp, c.pp = pp, c.dp = dp, c.ep = ep, c.etp = etp, c.edp = edp, c.vp = vp, c.tp_times_ep = tp_x_ep;
  if (micro_batch) {
    if (*micro_batch < 1) throw InputError("micro_batch", "", std::to_string(*micro_batch), "an integer >= 1");
    c.micro_batch = micro_batch;
    c.micro_batch_options = {*micro_batch};
  }
  c.pp_layout = pp_layout == "balanced" ? "" : pp_layout;
  one_of("mesh_order", mesh_order, {"auto", "pp-outer", "dp-outer"});
  if (mesh_order != "auto") c.pp_outermost = mesh_order == "pp-outer";
  one_of("schedule", schedule, {"auto", "1f1b", "interleaved"});
  if (vp && *vp > 1) c.schedule = PipelineSchedule::interleaved;
  if (schedule == "1f1b") c.schedule = PipelineSchedule::one_f_one_b;
  if (schedule == "interleaved") c.schedule = PipelineSchedule::interleaved;
  c.zero_stage = zero_arg(zero);
  if (fsdp) {
    c.zero_stage = 3;
    c.shard_group = *fsdp;
  }
  if (recompute != "auto") c.recompute = parse_recompute(recompute, "recompute");
  c.offload = one_of("offload", offload, {"none", "optimizer", "activations", "both", "auto"});
  std::string text;
  try {
    py::gil_scoped_release release;  // the search and the engine re-pricing run without the GIL
    text = plan_to_json_text(run_plan(req));
  } catch (const InputError& e) {
    // Every other CLI option is renamed as Python spells it by the module's translator (module.cpp); this one is
    // Python's mtp=False.
    if (e.where() == "--no-mtp") throw InputError("mtp", e.json_path(), "False " + e.value(), e.allowed());
    throw;
  }
  return json_loads(text);
}

// racksim plan --validate FILE --format json, as a dict.
py::object validate_training_runs(const py::object& rows, bool leave_one_model_out, bool leave_one_system_out, bool layouts,
                                  const std::string& calibration, const std::vector<std::string>& fit_probes) {
  if (leave_one_system_out && !leave_one_model_out)
    throw InputError("leave_one_system_out", "", "True with leave_one_model_out=False", "one of them (False uses the shipped fit)");
  if (!fit_probes.empty() && !leave_one_model_out)
    throw InputError("fit_probes", "", "'" + fit_probes.front() + "' with leave_one_model_out=False",
                     "held-out refits (leave_one_model_out=False uses the shipped fit)");
  TrainingFitOptions o;
  o.probe_dirs = fit_probes;
  o.leave_one_system_out = leave_one_system_out;
  o.calibration = calibration;
  o.layouts = layouts;
  const std::string path = name_or_path(rows, "rows");
  std::string text;
  {
    py::gil_scoped_release release;
    text = validation_to_json_text(validate_training(path, o, leave_one_model_out));
  }
  return json_loads(text);
}

// racksim plan --validate FILE --every-layout --format json, as a dict.
py::object price_published_layouts_runs(const py::object& rows, const std::string& calibration) {
  TrainingFitOptions o;
  o.calibration = calibration;
  const std::string path = name_or_path(rows, "rows");
  std::string text;
  {
    py::gil_scoped_release release;
    text = layout_pricing_to_json_text(price_every_layout(path, o));
  }
  return json_loads(text);
}

}  // namespace

void add_planner_bindings(py::module_& m) {
  m.def("plan", &plan, py::kw_only(), py::arg("system") = "gb200-nvl72", py::arg("racks") = py::none(),
        py::arg("model"), py::arg("global_batch"), py::arg("seq_len"), py::arg("top") = 10, py::arg("engine_top") = 3,
        py::arg("gpus") = py::none(), py::arg("tp") = py::none(), py::arg("cp") = py::none(), py::arg("pp") = py::none(),
        py::arg("dp") = py::none(), py::arg("ep") = py::none(), py::arg("etp") = py::none(), py::arg("edp") = py::none(),
        py::arg("vp") = py::none(), py::arg("tp_x_ep") = py::none(), py::arg("micro_batch") = py::none(),
        py::arg("pp_layout") = "balanced", py::arg("mesh_order") = "auto", py::arg("schedule") = "auto", py::arg("zero") = "auto", py::arg("fsdp") = py::none(),
        py::arg("recompute") = "auto", py::arg("offload") = "auto", py::arg("precision") = "bf16",
        py::arg("moe_imbalance") = py::none(), py::arg("force_balanced") = false, py::arg("moe_dispatcher") = "alltoall",
        py::arg("ep_overlap") = false, py::arg("mtp") = true, py::arg("grad_dtype") = "fp32", py::arg("memory_reserve") = 0.10,
        py::arg("compare") = "gb200-nvl72,gb300-nvl72,hgx-b200", py::arg("failures") = true, py::arg("calibration") = "default",
        py::arg("compute_fit") = "",
        "The layout planner, as `racksim plan --format json`: ranks Megatron layouts (TP x CP x PP x DP with the MoE "
        "layers' EP x ETP folded in, VP) of a model's training step on `racks` racks of `system`. Returns the CLI's JSON as "
        "a dict (units in the keys: step_time_s, tokens_per_s, memory_GB, breakdown_s). Keyword arguments mirror the CLI's "
        "options: global_batch (sequences per step), seq_len (tokens per sequence), tp/cp/pp/dp/ep/etp/edp/vp/tp_x_ep/"
        "micro_batch fix a degree, pp_layout balanced|uniform|a Megatron layout string, mesh_order auto|pp-outer|dp-outer, schedule auto|1f1b|interleaved, zero auto|0-3, fsdp "
        "(HSDP shard group, 0 = full FSDP), recompute auto|none|selective|full|selective:<modules>|full:block:<n>, offload "
        "auto|none|optimizer|activations|both, precision bf16|fp8-ds|fp8-cs|fp8-block|mxfp8|nvfp4, moe_dispatcher "
        "alltoall|deepep|hybridep, force_balanced, ep_overlap, mtp, grad_dtype fp32|bf16, compare 'a,b' or a list or None, "
        "failures=False as --no-failures, calibration default|none|path, compute_fit (a fit file). Bad input raises "
        "racksim.InputError.");
  m.def("validate_training", &validate_training_runs, py::arg("rows"), py::kw_only(), py::arg("leave_one_model_out") = true,
        py::arg("leave_one_system_out") = false, py::arg("layouts") = false, py::arg("calibration") = "default",
        py::arg("fit_probes") = std::vector<std::string>{},
        "`racksim plan --validate ROWS --format json` as a dict: every published training run of ROWS (a file like "
        "calibrate/training/published_training_throughput.json) priced with its layout pinned, predicted vs published "
        "tokens/s/GPU, leave-one-model-out unless leave_one_model_out=False (in-sample) or leave_one_system_out=True (each system held out); layouts=True adds the planner's own best "
        "layout per job; fit_probes (a list of Hopper or Blackwell probe directories, as --fit-probes) replaces the shipped "
        "probe runs in the held-out refits. Bad input raises racksim.InputError.");
  m.def("price_published_layouts", &price_published_layouts_runs, py::arg("rows"), py::kw_only(), py::arg("calibration") = "default",
        "`racksim plan --validate ROWS --every-layout --format json` as a dict: every record's layout pinned and priced "
        "with the shipped fit (recipes without a measurement too), with its memory by part against the usable HBM, or "
        "why it cannot be pinned. Bad input raises racksim.InputError.");
}

}  // namespace racksim::bindings
