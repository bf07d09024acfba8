// reduce_scatter/ring: NCCL's ring reduce-scatter. The per-rank input (nccl-tests' size) is cut into n
// segments, segment i = pieces {j*n + i} belonging to rank i; in n-1 steps (step s: rank i sends segment
// (i-s-1) mod n to rank i+1, which adds its own) segment i arrives at rank i reduced over all ranks.
// Each rank sends and receives (n-1)/n * S: time ~ (n-1) (alpha + S / (n B)). Chunking as
// all_reduce/ring.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  ScheduleBuilder b(request, "reduce_scatter/ring", n * depth.depth);
  b.reserve(depth.tasks);
  std::vector<int> members(n);
  for (int i = 0; i < n; ++i) members[i] = i;
  ring_reduce_scatter(b, members, interleaved_segments(n, depth.depth), b.phase("reduce-scatter"));
  b.append_note(depth.note);
  return b.finish();
}

}  // namespace racksim
