// all_reduce/nvls_collnet: NCCL's NVLS across nodes, which runs over CollNet (NCCL_COLLNET_ENABLE=1 with the
// SHARP plugin: tuning.cc:502-506 disables NVLS on several nodes without it). Inside each NVLink domain the
// switch reduces the GPUs' data (NVLS); each head sends its domain's slice through its own NIC to the
// fabric, whose InfiniBand switches add the domains' slices (SHARP) and return the sum to the heads; the
// NVSwitch multicasts it to the domain. NCCL's model: NVLS's bandwidth with bwInter for the network
// (tuning.cc:289-300), latency intraLat + interLat (:389-393). racksim runs it on the hierarchical schedule
// with NVLS inside and the fabric outside (hierarchical.cpp, --outer sharp); every GPU of a domain heads
// one slice through its own NIC, as in nvls_tree.cpp. Its calibration's kappa is SHARP's efficiency, on the
// flows that cross a NIC (FlowTerms::kappa_on_network), as for collnet_direct and collnet_chain.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"

namespace racksim {

Schedule build_all_reduce_nvls_collnet(const CollectiveRequest& request, const TopologyGraph& graph) {
  collnet_groups(request, graph, "nvls_collnet");  // several domains, an InfiniBand fabric, a NIC per GPU
  Schedule s = build_all_reduce_hierarchical(as_hierarchical(request, "nvls", "sharp"), graph);
  s.algorithm = "all_reduce/nvls_collnet";
  s.request = request;
  return s;
}

CostModel cost_all_reduce_nvls_collnet(const TopologyGraph& graph, const CollectiveRequest& request,
                                       const Calibration& calibration, const FlowTerms& terms) {
  collnet_groups(request, graph, "nvls_collnet");
  const CollectiveRequest hierarchical = as_hierarchical(request, "nvls", "sharp");  // the builder keeps a reference
  CostBuilder b(graph, hierarchical, calibration, "all_reduce/nvls_collnet", terms);
  hierarchical_model(b);
  return finish(b);
}

}  // namespace racksim
