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
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  ScheduleBuilder b(request, "broadcast/ring", rings * k);
  b.reserve(depth.tasks);
  const int phase = b.phase("broadcast");
  Streams streams;
  for (int c = 0; c < k; ++c)
    for (int j = 0; j < rings; ++j)
      for (int h = 0; h + 1 < n; ++h) {
        const int src = chains[j][h], dst = chains[j][h + 1];
        streams.record(j, src, b.transfer(Endpoint::rank(src), {Endpoint::rank(dst)}, j * k + c, 1, false, phase,
                                          streams.after(j, src)));
      }
  if (rings > 1) b.append_note(std::to_string(rings) + " chains, one per NIC rail (NCCL's ring channels)");
  b.append_note(depth.note);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_broadcast_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "broadcast/ring", terms);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  for (int h = 0; h + 1 < n; ++h) {
    std::vector<const FlowCoster::Path*> hop;
    for (const auto& chain : chains) hop.push_back(&b.fc.gpu_to_gpu(b.v(chain[h]), b.v(chain[h + 1])));
    b.add("broadcast", hop, S / rings);
  }
  b.m.unit_bytes = S / rings;
  b.m.transfer_budget = kChainTransferBudget;
  b.m.tasks_per_item = b.m.transfers_per_item = static_cast<long>(n - 1) * rings;
  if (rings > 1) b.m.detail = std::to_string(rings) + " chains, one per NIC rail";
  return finish(b);
}

}  // namespace racksim
