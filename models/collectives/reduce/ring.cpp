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
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  ScheduleBuilder b(request, "reduce/ring", rings * k);
  b.reserve(depth.tasks);
  const int phase = b.phase("reduce");
  Streams streams;
  for (int c = 0; c < k; ++c)
    for (int j = 0; j < rings; ++j)
      for (int h = 1; h < n; ++h) {
        const int src = chains[j][h], dst = chains[j][(h + 1) % n];
        streams.record(j, src, b.transfer(Endpoint::rank(src), {Endpoint::rank(dst)}, j * k + c, 1, true, phase,
                                          streams.after(j, src)));
      }
  if (rings > 1) b.append_note(std::to_string(rings) + " chains, one per NIC rail (NCCL's ring channels)");
  b.append_note(depth.note);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_reduce_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                           const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "reduce/ring", terms);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  const auto chains = nccl_chain_orders(request, graph);
  const int rings = static_cast<int>(chains.size());
  for (int h = 1; h < n; ++h) {
    std::vector<const FlowCoster::Path*> hop;
    for (const auto& chain : chains) hop.push_back(&b.fc.gpu_to_gpu(b.v(chain[h]), b.v(chain[(h + 1) % n])));
    b.add("reduce", hop, S / rings);
  }
  b.m.unit_bytes = S / rings;
  b.m.transfer_budget = kChainTransferBudget;
  b.m.tasks_per_item = b.m.transfers_per_item = static_cast<long>(n - 1) * rings;
  if (rings > 1) b.m.detail = std::to_string(rings) + " chains, one per NIC rail";
  return finish(b);
}

}  // namespace racksim
