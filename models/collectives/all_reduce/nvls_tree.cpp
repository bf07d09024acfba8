// all_reduce/nvls_tree: NCCL's NVLSTree (src/device/all_reduce.h, runTreeSplit with NVLS; connect.cc:250-320
// connects each channel's NVLS head to the heads of the other nodes as a double binary tree of arity <= 3,
// NCCL_MAX_NVLS_TREE_ARITY device.h:208). Inside each NVLink domain the switch reduces the GPUs' data
// (NVLS), the reduced slices cross the domains on a double binary tree between the GPUs that hold them,
// over those GPUs' NICs, and the switch multicasts the result back to every GPU of the domain. NCCL
// enables it only across several nodes (tuning.cc:465) and disables plain NVLS there (tuning.cc:469-471).
// racksim runs it on the hierarchical schedule with NVLS inside and the tree outside (hierarchical.cpp):
// every GPU of a domain holds one slice and uses its own NIC (NCCL uses up to 32 head GPUs per domain,
// one per NIC: with fewer than 32 GPUs per domain that is every GPU).
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"

namespace racksim {

Schedule build_all_reduce_nvls_tree(const CollectiveRequest& request, const TopologyGraph& graph) {
  Schedule s = build_all_reduce_hierarchical(as_hierarchical(request, "nvls", "tree"), graph);
  s.algorithm = "all_reduce/nvls_tree";
  s.request = request;
  return s;
}

CostModel cost_all_reduce_nvls_tree(const TopologyGraph& graph, const CollectiveRequest& request,
                                    const Calibration& calibration,
                    const FlowTerms& terms) {
  const CollectiveRequest hierarchical = as_hierarchical(request, "nvls", "tree");  // the builder keeps a reference
  CostBuilder b(graph, hierarchical, calibration, "all_reduce/nvls_tree", terms);
  hierarchical_model(b);
  return finish(b);
}

}  // namespace racksim
