#include "models/analytic/fig4_system.hpp"

#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/rank_placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

double gpu_nvlink_Bps(const TopologyGraph& g, int gpu_vertex) {
  double sum = 0;
  for (const int e : g.incident_edges(gpu_vertex))
    if (g.edges()[e].kind == LinkKind::nvlink) sum += g.edges()[e].bandwidth_Bps;
  return sum;
}

double gpu_nic_Bps(const TopologyGraph& g, int gpu_vertex) {
  const int nic = g.nic_of_gpu(gpu_vertex);
  return nic < 0 ? 0.0 : units::GBps_to_Bps(g.spec().nic_type(g.vertices()[nic].type).bandwidth_GBps);
}

double override_or(const std::optional<double>& gbps, double fallback_Bps, const std::string& name) {
  if (!gbps) return fallback_Bps;
  if (!(*gbps > 0) || *gbps > 1e6)
    throw InputError(name, "", number_text(*gbps), "a bandwidth in (0, 1e6] GB/s (1e9 bytes/s per direction)");
  return units::GBps_to_Bps(*gbps);
}

}  // namespace

Fig4Result fig4_on_system(const TopologyGraph& g, int gpus, std::uint64_t bytes, const Fig4Options& o,
                          const std::string& where) {
  // Python keyword names (phase_latency_us) or CLI option names (--phase-latency-us).
  auto name = [&where](std::string n) {
    if (!where.empty())
      for (char& c : n)
        if (c == '_') c = '-';
    return where + n;
  };
  if (!(o.efficiency > 0 && o.efficiency <= 1))
    throw InputError(name("efficiency"), "", number_text(o.efficiency), "a fraction of the vendor peak in (0, 1]");
  if (!(o.phase_latency_us >= 0 && o.phase_latency_us <= 1e6))
    throw InputError(name("phase_latency_us"), "", number_text(o.phase_latency_us), "microseconds in [0, 1e6]");
  CollectiveRequest request;
  request.gpus = place_ranks(g, gpus, name("gpus"));
  Fig4Result r;
  r.gpus = gpus;
  Fig4Inputs& in = r.inputs;
  in.bytes = static_cast<double>(bytes);
  in.nvls = o.nvls;
  in.phase_latency_s = units::us_to_s(o.phase_latency_us);
  if (gpus > 1) {
    const DomainGroups groups = domain_groups(request, g);  // InputError when a GPU has no NVLink domain
    in.gpus_per_domain = groups.per_domain;
    in.domains = groups.domains;
  }
  if (o.nvls && in.gpus_per_domain > 1 && !system_has_nvls(g))
    throw InputError(name("nvls"), "", "true", "false: " + g.spec().id + "'s switches cannot reduce (no NVLS)");
  const int v = g.gpu_vertex(request.gpus.front());
  in.nvlink_Bps = override_or(o.nvlink_GBps, gpu_nvlink_Bps(g, v), name("nvlink_GBps")) * o.efficiency;
  in.nic_Bps = override_or(o.nic_GBps, gpu_nic_Bps(g, v), name("nic_GBps")) * o.efficiency;
  if (in.domains > 1 && !(in.nic_Bps > 0))
    throw InputError(name("gpus"), "", std::to_string(gpus), "ranks inside one NVLink domain: " + g.spec().id + " has no NIC");
  r.time_s = fig4_allreduce_time_s(in);
  return r;
}

}  // namespace racksim
