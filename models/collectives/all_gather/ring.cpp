// all_gather/ring: NCCL's ring all-gather. Rank i owns the pieces {j*n + i} of the output buffer
// (bytes / n in all, nccl-tests' size being the output); in n-1 steps (step s: rank i sends the segment
// of rank (i-s) mod n to rank i+1) every rank receives every other rank's segment once. Each rank sends
// and receives (n-1)/n * S: time ~ (n-1) (alpha + S / (n B)). Chunking as all_reduce/ring.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const auto orders = nccl_ring_orders(request, graph);  // one per NIC rail across nodes
  const int n = static_cast<int>(request.gpus.size()), rings = static_cast<int>(orders.size());
  const long transfers = static_cast<long>(1) * (n - 1) * n * rings * depth.depth;
  check_ring_transfers(n, rings, transfers);
  ScheduleBuilder b(request, "all_gather/ring", rings * n * depth.depth);
  b.reserve(depth.tasks);
  const int ag_phase = b.phase("all-gather");
  Streams connections;  // one per (ring, rank): NCCL's steps in order (building_blocks.hpp)
  for (int j = 0; j < rings; ++j) {
    const auto segments = ring_segments(orders[j], depth.depth, j, true);
    ring_all_gather(b, orders[j], segments, ag_phase, &connections, j);
  }
  note_rings(b, rings);
  note_depth(b, depth);
  return b.finish();
}

// The same schedule as its own quotient where NCCL's rings are symmetric (several nodes alike: ring onto ring,
// nodes rotated by two; inside one node, the ring's turns): one task per orbit (rail_ring_symmetry, building_blocks.hpp).
std::optional<Schedule> quotient_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  return ring_quotient_schedule(request, graph, "all_gather/ring", true, false, true);
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_gather_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_gather/ring", terms);
  ring_model(b, false, true);
  return finish(b);
}

}  // namespace racksim

