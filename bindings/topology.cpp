// systems(), load(system, racks) -> System with summary() and route().
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "bindings/bindings.hpp"
#include "bindings/request_args.hpp"
#include "bindings/system_handle.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"

namespace py = pybind11;

namespace racksim::bindings {

namespace {
py::dict summary_dict(const SystemHandle& s) {
  const TopologySummary t = s.graph->summary();
  py::dict d;
  d["system"] = s.spec.id;
  d["racks"] = t.racks;
  d["gpus"] = t.gpus;
  d["cpus"] = t.cpus;
  d["trays"] = t.trays;
  d["switch_trays"] = t.switch_trays;
  d["switch_chips"] = t.switch_chips;
  d["gpu_nvlinks"] = t.gpu_nvlinks;
  d["nics"] = t.nics;
  d["nvlink_domains"] = t.nvlink_domains;
  d["gpus_per_nvlink_domain"] = t.gpus_per_domain;
  d["nvlink_aggregate_TBps"] = t.nvlink_aggregate_TBps;
  d["hbm_per_gpu_marketed_GB"] = s.spec.gpu_types.front().hbm_marketed_GB;  // NVIDIA's figure
  d["hbm_per_gpu_bytes"] = s.spec.gpu_types.front().hbm_capacity_bytes;    // as the driver reports it
  d["hbm_total_TB"] = t.hbm_total_TB;
  d["lpddr_total_TB"] = t.lpddr_total_TB;
  d["host_memory_total_TB"] = t.host_memory_total_TB;
  return d;
}

py::dict route_dict(const SystemHandle& s, const std::string& src, const std::string& dst) {
  const auto& g = *s.graph;
  auto resolve = [&](const std::string& name, const char* which) {
    const int v = g.find_vertex(name);
    if (v < 0) throw InputError(which, "", "'" + name + "'", "gpuN, cpuN, nicN or a device name");
    return v;
  };
  const int a = resolve(src, "src"), b = resolve(dst, "dst");
  if (a == b) throw InputError("dst", "", "'" + dst + "' (the source itself)", "a device other than the source");
  const Route r = find_route(g, a, b);
  py::list hops;
  for (const auto& h : r.hops) {
    py::dict hop;
    hop["from"] = h.from_name;
    hop["to"] = h.to_name;
    hop["kind"] = to_string(h.kind);
    hop["links"] = h.links;
    hop["bandwidth_GBps"] = units::Bps_to_GBps(h.bandwidth_Bps);
    hop["latency_us"] = units::s_to_us(h.latency_s);
    hops.append(hop);
  }
  py::dict d;
  d["src"] = g.vertices()[r.src].name;
  d["dst"] = g.vertices()[r.dst].name;
  d["hops"] = hops;
  d["bottleneck_GBps"] = units::Bps_to_GBps(r.bottleneck_Bps);
  d["latency_us"] = units::s_to_us(r.latency_s);
  return d;
}
}  // namespace

void add_topology_bindings(py::module_& m) {
  m.def("systems", [] {
    py::list out;
    for (const auto& [id, description] : SystemCatalog::shipped().list()) {
      py::dict d;
      d["id"] = id;
      d["description"] = description;
      out.append(d);
    }
    return out;
  }, "The shipped systems: a list of {'id', 'description'}.");

  py::class_<SystemHandle, std::shared_ptr<SystemHandle>>(m, "System",
      "A system instantiated for a number of racks (racksim.load).")
      .def_property_readonly("id", [](const SystemHandle& s) { return s.spec.id; })
      .def_property_readonly("racks", [](const SystemHandle& s) { return s.graph->racks(); })
      .def_property_readonly("gpus", [](const SystemHandle& s) { return s.graph->gpu_count(); })
      .def_property_readonly("gpus_per_nvlink_domain", [](const SystemHandle& s) { return s.graph->gpus_per_domain(); })
      .def("summary", &summary_dict, "Counts and aggregates computed from the graph (as `racksim show --format json`).")
      .def("route", &route_dict, py::arg("src"), py::arg("dst"),
           "The path between two devices (gpuN, cpuN, nicN or names): hops with kind, bandwidth_GBps, latency_us.")
      .def("spec", [](const SystemHandle& s) { return json_loads(topology_to_json_text(s.spec)); },
           "The topology as a dict in the topologies/*.json format (units in the keys: bandwidth_GBps, "
           "latency_us, ...). Change it and pass it to racksim.load() to try a variant.")
      .def("__repr__", [](const SystemHandle& s) {
        return "<racksim.System '" + s.spec.id + "' racks=" + std::to_string(s.graph->racks()) +
               " gpus=" + std::to_string(s.graph->gpu_count()) + ">";
      });

  m.def("load", [](const py::object& system, std::optional<int> racks, std::optional<std::string> partitions) {
    std::shared_ptr<SystemHandle> h;
    if (py::isinstance<py::dict>(system)) {
      const std::string text = py::module_::import("json").attr("dumps")(system).cast<std::string>();
      h = SystemHandle::from_spec(topology_from_json_text(text, "system (dict)"), racks);
    } else if (py::hasattr(system, "__fspath__")) {
      h = SystemHandle::load(py::str(system.attr("__fspath__")()), racks);
    } else if (!py::isinstance<py::str>(system)) {
      throw InputError("system", "", py::repr(system).cast<std::string>(), "a system id, a topology JSON path or a dict");
    } else {
      h = SystemHandle::load(system.cast<std::string>(), racks);
    }
    if (partitions) h->graph->apply_partitions(parse_partitions(*partitions, *h->graph, "partitions"));
    return h;
  }, py::arg("system"), py::arg("racks") = py::none(), py::arg("partitions") = py::none(),
     "Load a shipped system by id, a topology JSON file by path (str or pathlib.Path), or a topology dict "
     "(as System.spec() returns), for `racks` racks (default: the system's). partitions: NVLink partitions as "
     "the CLI's --partitions takes them ('default', '2x9', '3x1', 'a=trays:0-7;b=trays:8-15'). Returns a "
     "racksim.System.");

  m.def("parse_bytes", [](const py::object& value) { return bytes_arg(value, "bytes"); }, py::arg("bytes"),
        "A byte count as the CLI reads it: 8, \"64K\", \"512M\", \"1G\" (binary), \"1GiB\", \"100GB\" (decimal) -> int bytes.");
}

}  // namespace racksim::bindings
