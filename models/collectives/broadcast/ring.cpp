// broadcast/ring: NCCL's ring broadcast, a pipelined chain from the root along each ring channel: root ->
// root+1 -> ... -> root+n-1 (mod n) inside one NVLink domain; across domains one chain per NIC rail, NCCL's
// rail-aligned rings cut open at the root (nccl_chain_orders), each with 1 / chains of the buffer, so the
// nodes' NICs share the traffic as NCCL's channels do. The buffer is cut into k chunks per chain; a rank
// forwards chunk c as soon as it has arrived and after it forwarded chunk c-1, so a chain fills in n-1 hops
// and then delivers one chunk per hop time: time ~ (n - 2 + k) (alpha + S / (chains k B)). k minimises that
// with nominal figures (transfer budget 20 k) or comes from --chunk-bytes.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_broadcast_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  ScheduleBuilder b(request, "broadcast/ring", rings * depth.depth);
  b.reserve(depth.tasks);
  chain_transfers(b, chains, depth.depth, b.phase("broadcast"), false);
  if (rings > 1) b.append_note(std::to_string(rings) + " chains, one per NIC rail (NCCL's ring channels)");
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_broadcast_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "broadcast/ring", terms);
  chain_model(b, "broadcast", false);
  return finish(b);
}

}  // namespace racksim
