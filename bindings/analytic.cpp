// The closed-form models from Python: System.analytic() / racksim.analytic() (alpha-beta per algorithm
// on the real topology and calibration, no contention) and System.fig4() / racksim.fig4() /
// racksim.fig4_model() (the course's Fig 4 model, seed course section 7). Numbers are rounded to 6
// significant digits like the CLI's JSON.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <limits>
#include <memory>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "bindings/system_handle.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/analytic/fig4_system.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/rank_placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"
#include "sim/topo/topology_graph.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {

using SystemClass = py::class_<SystemHandle, std::shared_ptr<SystemHandle>>;

double r6(double v) { return round_to_significant(v); }

// racks: None (the system's own, or a System's) or an int; its range is the system's (SystemHandle).
std::optional<int> racks_arg(const py::handle& racks) {
  if (racks.is_none()) return std::nullopt;
  return optional_int_arg(racks, "racks", 1, std::numeric_limits<int>::max(), 0, "the system's own");
}

std::shared_ptr<SystemHandle> as_system(const py::handle& system, const py::handle& racks_value) {
  const std::optional<int> racks = racks_arg(racks_value);
  if (py::isinstance<SystemHandle>(system)) {
    auto s = system.cast<std::shared_ptr<SystemHandle>>();
    if (!racks || *racks == s->graph->racks()) return s;
    return SystemHandle::from_spec(s->spec, *racks);
  }
  if (!py::isinstance<py::str>(system) && !py::hasattr(system, "__fspath__"))
    throw InputError("system", "", py::repr(system).cast<std::string>(), "a system id, a topology JSON path or a racksim.System");
  const std::string name = py::str(py::isinstance<py::str>(system) ? system : system.attr("__fspath__")()).cast<std::string>();
  return SystemHandle::load(name, racks);
}

void add_bandwidths(py::dict& d, CollectiveOp op, int gpus, std::uint64_t bytes, double time_s) {
  const double algbw = time_s > 0 ? static_cast<double>(bytes) / time_s : 0.0;
  d["time_us"] = r6(units::s_to_us(time_s));
  d["algbw_GBps"] = r6(units::Bps_to_GBps(algbw));
  d["busbw_GBps"] = r6(units::Bps_to_GBps(algbw * busbw_factor(op, gpus)));
}

py::dict analytic(const SystemHandle& s, const std::string& op, int gpus, const py::object& bytes,
                  const std::string& algo, const py::object& calibration, const py::object& chunk_bytes,
                  const py::object& inner, const py::object& outer, const std::string& protocol, const py::object& channels,
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
  a.bytes = bytes_arg(bytes, "bytes");
  a.algo = algo;
  a.chunk_bytes = chunk_bytes_arg(chunk_bytes);
  a.inner = inner;
  a.outer = outer;
  const CollectiveRequest request = make_request(*s.graph, a);
  const Calibration cal = calibration_arg(calibration);
  // The closed form's result in the engine's shape (analytic_run_result, as `racksim collective --model analytic`),
  // less what only the engine has (links, failures, engine, chunk_bytes).
  const py::object full = result_dict(analytic_run_result(*s.graph, request, cal, ""));
  py::dict d;
  d["model"] = "analytic";
  for (const char* key : {"system", "racks", "op", "algo", "protocol", "channels", "algo_note", "warnings", "gpus", "bytes",
                          "time_us", "algbw_GBps", "busbw_GBps", "phases", "calibration", "heldout_error"})
    d[key] = full[key];
  return d;
}

py::dict fig4_dict(const Fig4Inputs& in, double time_s, int gpus) {
  py::dict d;
  d["model"] = "fig4";
  d["op"] = "all_reduce";
  d["algo"] = in.nvls ? "nvls" : "ring";
  d["gpus"] = gpus;
  d["bytes"] = static_cast<std::uint64_t>(in.bytes);
  d["gpus_per_domain"] = in.gpus_per_domain;
  d["domains"] = in.domains;
  d["nvlink_GBps"] = r6(units::Bps_to_GBps(in.nvlink_Bps));
  d["nic_GBps"] = r6(units::Bps_to_GBps(in.nic_Bps));
  d["phase_latency_us"] = r6(units::s_to_us(in.phase_latency_s));
  add_bandwidths(d, CollectiveOp::all_reduce, gpus, static_cast<std::uint64_t>(in.bytes), time_s);
  return d;
}

std::optional<double> optional_GBps(const py::object& value, const std::string& name) {
  return optional_number_arg(value, name, "None (the topology's) or a bandwidth in GB/s per direction");
}

py::dict fig4_system(const SystemHandle& s, int gpus, const py::object& bytes, bool nvls, double phase_latency_us,
                     const py::object& nvlink_GBps, const py::object& nic_GBps, double efficiency) {
  Fig4Options o;
  o.nvls = nvls;
  o.phase_latency_us = phase_latency_us;
  o.nvlink_GBps = optional_GBps(nvlink_GBps, "nvlink_GBps");
  o.nic_GBps = optional_GBps(nic_GBps, "nic_GBps");
  o.efficiency = efficiency;
  const Fig4Result r = fig4_on_system(*s.graph, gpus, bytes_arg(bytes, "bytes"), o, "");  // shared with `racksim fig4`
  py::dict d = fig4_dict(r.inputs, r.time_s, gpus);
  d["system"] = s.spec.id;
  d["racks"] = s.graph->racks();
  d["efficiency"] = efficiency;
  return d;
}

}  // namespace

void add_analytic_bindings(py::module_& m) {
  auto cls = py::reinterpret_borrow<SystemClass>(m.attr("System"));
  static const char* analytic_doc = R"(Closed-form alpha-beta estimate of a collective on this topology and
calibration, without contention (microseconds to evaluate). Arguments as System.collective() (bytes
as int or "1G"; calibration "default" = shipped, "none" = vendor peaks). Returns a dict: model
'analytic', algo, protocol and channels (what NCCL would run, or the overrides), algo_note (NCCL's
candidates), warnings, time_us (microseconds), algbw_GBps and busbw_GBps (1e9 bytes/s,
nccl-tests' rules), phases [{name, time_us}], calibration.)";
  cls.def("analytic", &analytic, py::arg("op"), py::arg("gpus"), py::arg("bytes"), py::arg("algo") = "auto",
          py::arg("calibration") = "default", py::arg("chunk_bytes") = py::none(), py::arg("inner") = py::none(),
          py::arg("outer") = py::none(), py::arg("protocol") = "auto", py::arg("channels") = py::none(),
          py::arg("nvls") = true, py::arg("collnet") = false, py::arg("nccl_version") = "2.28",
          py::arg("ib_qps_per_connection") = 0, analytic_doc);
  m.def("analytic",
        [](const py::object& system, const std::string& op, int gpus, const py::object& bytes, const py::object& racks,
           const std::string& algo, const py::object& calibration, const py::object& chunk_bytes,
           const py::object& inner, const py::object& outer, const std::string& protocol, const py::object& channels,
           bool nvls, bool collnet, const std::string& nccl_version, int ib_qps_per_connection) {
          return analytic(*as_system(system, racks), op, gpus, bytes, algo, calibration, chunk_bytes, inner, outer, protocol,
                          channels, nvls, collnet, nccl_version, ib_qps_per_connection);
        },
        py::arg("system"), py::arg("op"), py::arg("gpus"), py::arg("bytes"), py::arg("racks") = py::none(),
        py::arg("algo") = "auto", py::arg("calibration") = "default", py::arg("chunk_bytes") = py::none(),
        py::arg("inner") = py::none(), py::arg("outer") = py::none(), py::arg("protocol") = "auto",
        py::arg("channels") = py::none(), py::arg("nvls") = true, py::arg("collnet") = false,
        py::arg("nccl_version") = "2.28", py::arg("ib_qps_per_connection") = 0,
        (std::string("racksim.analytic(system, ...): system is an id, a topology JSON path or a System;\n"
                     "racks as in racksim.load(). ") + analytic_doc).c_str());

  static const char* fig4_doc = R"(The course's Fig 4 all-reduce model (seed course section 7): bandwidth only, vendor
peaks per direction, a fixed latency per phase. With d ranks per NVLink domain and D domains:
  T = L * phases + [d > 1] * (nvls ? S / B_nvl : 2(d-1)/d * S / B_nvl) + [D > 1] * 2(D-1)/D * (S/d) / B_nic
gpus are placed as in collective(); d and D come from where they land. B_nvl (all of one GPU's
NVLinks) and B_nic (its NIC) come from the topology unless nvlink_GBps / nic_GBps (1e9 bytes/s per
direction) are given; efficiency (0, 1] scales both (the course: real NCCL reaches ~70-90 %).
phase_latency_us: L in microseconds (default 5 us, an assumption: the course gives no value).
Returns a dict: model 'fig4', gpus_per_domain, domains, nvlink_GBps, nic_GBps, time_us, algbw_GBps,
busbw_GBps.)";
  cls.def("fig4", &fig4_system, py::arg("gpus"), py::arg("bytes"), py::arg("nvls") = false,
          py::arg("phase_latency_us") = kFig4PhaseLatencyUs, py::arg("nvlink_GBps") = py::none(),
          py::arg("nic_GBps") = py::none(), py::arg("efficiency") = 1.0, fig4_doc);
  m.def("fig4",
        [](const py::object& system, int gpus, const py::object& bytes, const py::object& racks, bool nvls,
           double phase_latency_us, const py::object& nvlink_GBps, const py::object& nic_GBps, double efficiency) {
          return fig4_system(*as_system(system, racks), gpus, bytes, nvls, phase_latency_us, nvlink_GBps, nic_GBps,
                             efficiency);
        },
        py::arg("system"), py::arg("gpus"), py::arg("bytes"), py::arg("racks") = py::none(), py::arg("nvls") = false,
        py::arg("phase_latency_us") = kFig4PhaseLatencyUs, py::arg("nvlink_GBps") = py::none(),
        py::arg("nic_GBps") = py::none(), py::arg("efficiency") = 1.0,
        (std::string("racksim.fig4(system, gpus, bytes, racks=None, ...): system is an id, a path or a System.\n") +
         fig4_doc).c_str());
  m.def("fig4_model",
        [](const py::object& bytes, int gpus_per_domain, int domains, double nvlink_GBps, double nic_GBps,
           double phase_latency_us, bool nvls) {
          Fig4Inputs in;
          in.bytes = static_cast<double>(bytes_arg(bytes, "bytes"));
          in.gpus_per_domain = gpus_per_domain;
          in.domains = domains;
          in.nvlink_Bps = units::GBps_to_Bps(nvlink_GBps);
          in.nic_Bps = units::GBps_to_Bps(nic_GBps);
          in.phase_latency_s = units::us_to_s(phase_latency_us);
          in.nvls = nvls;
          return fig4_dict(in, fig4_allreduce_time_s(in), gpus_per_domain * domains);
        },
        py::arg("bytes"), py::arg("gpus_per_domain"), py::arg("domains") = 1, py::arg("nvlink_GBps") = 0.0,
        py::arg("nic_GBps") = 0.0, py::arg("phase_latency_us") = kFig4PhaseLatencyUs, py::arg("nvls") = false,
        "The course's Fig 4 formula on raw inputs (bytes; GB/s = 1e9 bytes/s per direction; microseconds).");
}

}  // namespace racksim::bindings
