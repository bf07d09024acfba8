// all_reduce/ring: NCCL's ring all-reduce. The ranks form a ring in request order and the buffer is cut
// into n segments. A reduce-scatter of n-1 steps (step s: rank i sends segment (i-s-1) mod n to rank
// i+1, which adds it to its own) leaves segment i fully reduced at rank i; an all-gather of n-1 steps
// copies each reduced segment around the ring. Every rank sends and receives 2(n-1)/n * S over 2(n-1)
// dependent steps: time ~ 2(n-1) (alpha + S / (n B)) (seed course section 7).
// Chunking: by default each step moves one whole segment (every link is busy in every step, so cutting
// segments changes nothing but latency terms); --chunk-bytes cuts each segment into pieces that travel
// independently (chunk j*n + i is piece j of segment i).
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  ScheduleBuilder b(request, "all_reduce/ring", n * depth.depth);
  b.reserve(depth.tasks);
  std::vector<int> members(n);
  for (int i = 0; i < n; ++i) members[i] = i;
  const auto segments = interleaved_segments(n, depth.depth);
  ring_reduce_scatter(b, members, segments, b.phase("reduce-scatter"));
  ring_all_gather(b, members, segments, b.phase("all-gather"));
  b.append_note(depth.note);
  return b.finish();
}

}  // namespace racksim
