// reduce/ring: NCCL's ring reduce, the broadcast's chains run towards the root: root+1 -> root+2 -> ... ->
// root (mod n) inside one NVLink domain, one chain per NIC rail across domains (nccl_chain_orders), each with
// 1 / chains of the buffer. The rank after the root starts each chunk; every rank adds its own data to the
// partial sum it receives and forwards it once it has forwarded the chunk before, and the root ends with the
// sum of all ranks. NCCL treats Reduce and Broadcast alike: Ring only, nRanks steps, the same latency formula
// (src/graph/tuning.cc:273, 363-368), so the cost is the broadcast's: a chain fills in n-1 hops, then delivers
// one chunk per hop time, time ~ (n - 2 + k) (alpha + S / (chains k B)), k from the transfer budget or
// --chunk-bytes.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/cost_patterns.hpp"

namespace racksim {

Schedule build_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  ScheduleBuilder b(request, "reduce/ring", rings * depth.depth);
  b.reserve(depth.tasks);
  chain_transfers(b, chains, depth.depth, b.phase("reduce"), true);
  if (rings > 1) b.append_note(std::to_string(rings) + " chains, one per NIC rail (NCCL's ring channels)");
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_reduce_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "reduce/ring", terms);
  chain_model(b, "reduce", true);
  return finish(b);
}

}  // namespace racksim
