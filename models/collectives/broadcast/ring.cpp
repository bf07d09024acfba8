// broadcast/ring: NCCL's ring broadcast, a pipelined chain from the root: root -> root+1 -> ... ->
// root+n-1 (mod n). The buffer is cut into k chunks; a rank forwards chunk c as soon as it has arrived
// and after it forwarded chunk c-1, so the chain fills in n-1 hops and then delivers one chunk per hop
// time: time ~ (n - 2 + k) (alpha + S / (k B)). k minimises that with nominal figures (transfer budget
// 20 k) or comes from --chunk-bytes.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_broadcast_ring(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "broadcast/ring", k);
  b.reserve(depth.tasks);
  const int phase = b.phase("broadcast");
  Streams streams;
  for (int c = 0; c < k; ++c)
    for (int h = 0; h + 1 < n; ++h) {
      const int src = (request.root + h) % n, dst = (request.root + h + 1) % n;
      streams.record(0, src, b.transfer(Endpoint::rank(src), {Endpoint::rank(dst)}, c, 1, false, phase,
                                        streams.after(0, src)));
    }
  b.append_note(depth.note);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_broadcast_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "broadcast/ring", terms);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  for (int h = 0; h + 1 < n; ++h) {
    const int src = (request.root + h) % n, dst = (request.root + h + 1) % n;
    b.add("broadcast", {&b.fc.gpu_to_gpu(b.v(src), b.v(dst))}, S);
  }
  b.m.unit_bytes = S;
  b.m.tasks_per_item = b.m.transfers_per_item = n - 1;
  return finish(b);
}

}  // namespace racksim

