// reduce_scatter/ring: NCCL's ring reduce-scatter. The per-rank input (nccl-tests' size) is cut into n
// segments, segment i = pieces {j*n + i} belonging to rank i; in n-1 steps (step s: rank i sends segment
// (i-s-1) mod n to rank i+1, which adds its own) segment i arrives at rank i reduced over all ranks.
// Each rank sends and receives (n-1)/n * S: time ~ (n-1) (alpha + S / (n B)). Chunking as
// all_reduce/ring.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const auto orders = nccl_ring_orders(request, graph);  // one per NIC rail across nodes
  const int n = static_cast<int>(request.gpus.size()), rings = static_cast<int>(orders.size());
  const long transfers = static_cast<long>(1) * (n - 1) * n * rings * depth.depth;
  check_ring_transfers(n, rings, transfers);
  ScheduleBuilder b(request, "reduce_scatter/ring", rings * n * depth.depth);
  b.reserve(depth.tasks);
  const int rs_phase = b.phase("reduce-scatter");
  Streams connections;  // one per (ring, rank): NCCL's steps in order (building_blocks.hpp)
  for (int j = 0; j < rings; ++j) {
    const auto segments = ring_segments(orders[j], depth.depth, j, true);
    ring_reduce_scatter(b, orders[j], segments, rs_phase, &connections, j);
  }
  note_rings(b, rings);
  note_depth(b, depth);
  return b.finish();
}

// The same schedule as its own quotient where NCCL's rings are symmetric (several nodes alike: ring onto ring,
// nodes rotated by two; inside one node, the ring's turns): one task per orbit (rail_ring_symmetry, building_blocks.hpp).
std::optional<Schedule> quotient_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  return ring_quotient_schedule(request, graph, "reduce_scatter/ring", true, true, false);
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_reduce_scatter_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "reduce_scatter/ring", terms);
  ring_model(b, true, false);
  return finish(b);
}

}  // namespace racksim

