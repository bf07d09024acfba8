#include "models/calibration/predictor.hpp"
#include "models/nccl/nccl_system.hpp"

#include <cmath>
#include <limits>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/nvlink_partitions.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::calibration {

Predictor::Predictor(std::string topology_dir, CollectiveModel collective_model, std::string model_name)
    : catalog_(std::make_unique<SystemCatalog>(std::move(topology_dir))),
      collective_model_(std::move(collective_model)),
      model_name_(std::move(model_name)) {}

Predictor::~Predictor() = default;

const TopologyGraph& Predictor::graph(const std::string& system, int racks, const std::string& partitions,
                                      double nic_GBps) const {
  auto& slot = graphs_[{system, racks, partitions, nic_GBps}];
  if (!slot) {
    TopologySpec spec = catalog_->load(system);
    if (nic_GBps > 0)
      for (auto& nic : spec.nic_types) nic.bandwidth_GBps = nic_GBps;
    auto g = std::make_unique<TopologyGraph>(spec, racks);
    if (!partitions.empty()) g->apply_partitions(parse_partitions(partitions, *g, "the record's NVLink partitions"));
    slot = std::move(g);
  }
  return *slot;
}

TransferRoute Predictor::transfer_route(const Measurement& m) const {
  const TopologyGraph& g = graph(m);
  const int a = g.find_vertex(m.src), b = g.find_vertex(m.dst);
  if (a < 0 || b < 0)
    throw InputError(m.id, "", (a < 0 ? m.src : m.dst) + " on " + m.system,
                     "a device of the system (gpuN, cpuN, nicN or a vertex name)");
  const Route r = find_route(g, a, b);
  TransferRoute t;
  t.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (const auto& h : r.hops) {
    t.hops.push_back({h.kind, h.latency_s, h.bandwidth_Bps});
    t.latency_s += h.latency_s;
    if (h.bandwidth_Bps < t.bottleneck_Bps) {
      t.bottleneck_Bps = h.bandwidth_Bps;
      t.bottleneck_kind = h.kind;
    }
  }
  if (t.hops.empty()) throw InputError(m.id, "", m.src + " -> " + m.dst, "two different devices");
  return t;
}

double Predictor::hbm_bandwidth_Bps(const Measurement& m) const {
  const TopologyGraph& g = graph(m);
  const int v = g.find_vertex(m.src.empty() ? "gpu0" : m.src);
  if (v < 0) throw InputError(m.id, "", m.src, "a GPU of " + m.system);
  return units::GBps_to_Bps(g.spec().gpu_type(g.vertices()[v].type).hbm_bandwidth_GBps);
}

CollectiveRequest collective_request(const Measurement& m) {
  CollectiveRequest req;
  req.op = m.op;
  req.algorithm = m.algorithm;
  req.gpus = m.gpus;
  req.bytes = static_cast<std::uint64_t>(std::llround(m.bytes));
  req.protocol = m.protocol;
  req.channels = m.channels;
  req.nvls_enabled = m.nvls_enabled;
  req.collnet_enabled = m.collnet_enabled;
  req.ib_qps_per_connection = m.ib_qps_per_connection;
  if (const auto release = nccl::tuner_release_if_known(m.nccl_version)) req.nccl_version = nccl::release_name(*release);
  return req;
}

double Predictor::time_s(const Measurement& m, const Calibration& c) const {
  switch (m.kind) {
    case MeasurementKind::collective: {
      if (!collective_model_) throw InputError(m.id, "", "collective", "a predictor with a collective model");
      const TopologyGraph& g = graph(m);
      return collective_model_(g, collective_request(m), c);
    }
    case MeasurementKind::transfer: {
      const TransferRoute r = transfer_route(m);
      const TopologyGraph& g = graph(m);
      const std::string arch =
          g.gpu_count() > 0 ? architecture_of(g.spec().gpu_type(g.vertices()[g.gpu_vertex(0)].type).compute_capability) : "";
      double alpha = 0, bw = std::numeric_limits<double>::infinity();
      for (const auto& h : r.hops) {
        const LinkCalibration& lc = c.link(h.kind, arch);
        alpha += h.latency_s + units::us_to_s(lc.extra_latency_us);
        bw = std::min(bw, h.bandwidth_Bps * lc.bandwidth_efficiency);
      }
      return alpha + m.bytes / bw;
    }
    case MeasurementKind::memory:
      return m.bytes / hbm_bandwidth_Bps(m);
  }
  return 0;
}

double busbw_GBps(const Measurement& m, double time_s) {
  if (m.kind != MeasurementKind::collective || !(time_s > 0)) return 0;
  return m.bytes / time_s * busbw_factor(m.op, static_cast<int>(m.gpus.size())) / units::kGB;
}

}  // namespace racksim::calibration
