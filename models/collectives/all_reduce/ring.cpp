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
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const auto orders = nccl_ring_orders(request, graph);  // one per NIC rail across nodes
  const int n = static_cast<int>(request.gpus.size()), rings = static_cast<int>(orders.size());
  const long transfers = static_cast<long>(2) * (n - 1) * n * rings * depth.depth;
  check_ring_transfers(n, rings, transfers);
  ScheduleBuilder b(request, "all_reduce/ring", rings * n * depth.depth);
  b.reserve(depth.tasks);
  const int rs_phase = b.phase("reduce-scatter");
  const int ag_phase = b.phase("all-gather");
  Streams connections;  // one per (ring, rank): NCCL's steps in order (building_blocks.hpp)
  for (int j = 0; j < rings; ++j) {
    const auto segments = ring_segments(orders[j], depth.depth, j, false);
    ring_reduce_scatter(b, orders[j], segments, rs_phase, &connections, j);
    ring_all_gather(b, orders[j], segments, ag_phase, &connections, j);
  }
  note_rings(b, rings);
  note_depth(b, depth);
  return b.finish();
}

// The same schedule as its own quotient where NCCL's rings are symmetric (several nodes alike: ring onto ring,
// nodes rotated by two; inside one node, the ring's turns): one task per orbit (rail_ring_symmetry, building_blocks.hpp).
std::optional<Schedule> quotient_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  return ring_quotient_schedule(request, graph, "all_reduce/ring", false, true, true);
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_reduce_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/ring", terms);
  ring_model(b, true, true);
  return finish(b);
}

}  // namespace racksim

