// all_gather/ring: NCCL's ring all-gather. Rank i owns the pieces {j*n + i} of the output buffer
// (bytes / n in all, nccl-tests' size being the output); in n-1 steps (step s: rank i sends the segment
// of rank (i-s) mod n to rank i+1) every rank receives every other rank's segment once. Each rank sends
// and receives (n-1)/n * S: time ~ (n-1) (alpha + S / (n B)). Chunking as all_reduce/ring.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  ScheduleBuilder b(request, "all_gather/ring", n * depth.depth);
  b.reserve(depth.tasks);
  std::vector<int> members(n);
  for (int i = 0; i < n; ++i) members[i] = i;
  ring_all_gather(b, members, interleaved_segments(n, depth.depth), b.phase("all-gather"));
  b.append_note(depth.note);
  return b.finish();
}

}  // namespace racksim
