// send_recv/ring: nccl-tests' sendrecv_perf pattern, the pipeline-parallel stage-to-stage transfer: rank
// r sends its whole buffer to rank (r+1) mod n and receives rank r-1's, all ranks at once (with 2 ranks,
// both directions of one pair). Chunk r*k + j is piece j of rank r's buffer; the k pieces leave one
// after the other, so k = 1 (the default: one hop gains nothing from pipelining) costs alpha + S/B.
// request.root is not used.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_send_recv_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "send_recv/ring", n * k);
  b.reserve(depth.tasks);
  const int phase = b.phase("send-recv");
  Streams streams;
  for (int j = 0; j < k; ++j)
    for (int r = 0; r < n; ++r)
      streams.record(0, r, b.transfer(Endpoint::rank(r), {Endpoint::rank((r + 1) % n)}, r * k + j, 1, false, phase,
                                      streams.after(0, r)));
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_send_recv_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "send_recv/ring", terms);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  std::vector<const FlowCoster::Path*> flows;
  for (int r = 0; r < n; ++r) flows.push_back(&b.fc.gpu_to_gpu(b.v(r), b.v((r + 1) % n)));
  b.add("send-recv", flows, S);
  b.m.unit_bytes = S;
  b.m.tasks_per_item = b.m.transfers_per_item = n;
  return finish(b);
}

}  // namespace racksim

