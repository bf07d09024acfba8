#include "models/fabric/mnnvl_estimate.hpp"

#include <algorithm>

#include "models/analytic/analytic_model.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::fabric {

namespace {
AllReduceEstimate run(const TopologyGraph& graph, const std::vector<int>& gpus, std::uint64_t bytes, const Calibration& cal) {
  CollectiveRequest r;
  r.op = CollectiveOp::all_reduce;
  r.algorithm = "auto";
  r.gpus = gpus;
  r.bytes = bytes;
  AllReduceEstimate e;
  try {
    const AnalyticEstimate a = analytic_collective(graph, r, cal);
    e.seconds = a.time_s;
    e.algorithm = a.algorithm;
  } catch (const InputError& err) {  // e.g. ranks spread unevenly over domains for hierarchical
    e.seconds = -1;
    e.algorithm = "bandwidth-only";
    e.note = err.what();
  }
  return e;
}
}  // namespace

AllReduceEstimate allreduce_with_mnnvl(const TopologyGraph& graph, const std::vector<int>& gpus, std::uint64_t bytes,
                                       const Calibration& calibration) {
  return run(graph, gpus, bytes, calibration);
}

AllReduceEstimate allreduce_without_mnnvl(const TopologyGraph& graph, const std::vector<int>& gpus, std::uint64_t bytes,
                                          const Calibration& calibration) {
  TopologySpec spec = graph.spec();
  const int gpt = graph.gpus_per_tray();
  int last_tray = 0;
  for (int g : gpus) last_tray = std::max(last_tray, g / gpt);
  // Each tray a "rack" of one tray with its own NVLink domain; only as many as the job reaches.
  const int racks = last_tray + 1;
  spec.rack.trays = 1;
  spec.rack.default_racks = racks;
  spec.rack.max_racks = std::max(spec.rack.max_racks, racks);
  if (spec.nvlink_domain) {
    spec.nvlink_domain->racks = 1;
    spec.nvlink_domain->gpu_links_scope = GpuLinksScope::domain;
  }
  const TopologyGraph per_tray(spec, racks);
  return run(per_tray, gpus, bytes, calibration);
}

}  // namespace racksim::fabric
