// all_reduce/nvls: NVLink SHARP (seed course section 7). Every GPU sends its buffer once to its NVLink
// domain's switch plane, which adds the contributions (a reduce into Endpoint::switch_plane), and the
// switch multicasts the result back to every GPU: one switch round trip instead of 2(n-1) ring steps;
// each GPU sends S and receives S. The buffer is cut into k chunks that pipeline: each GPU sends its
// chunks one after another, and the switch multicasts chunk c as soon as every GPU's chunk c has
// arrived, while chunk c+1 goes up (GPU->switch and switch->GPU are the two directions of the port).
// k is the depth that minimises the pipelined time with nominal link figures (or --chunk-bytes).
// Requires nvlink_domain.multicast_reduction and all ranks in one NVLink domain.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_reduce_nvls(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int domain = nvls_domain(request, graph);
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "all_reduce/nvls", k);
  b.reserve(depth.tasks);
  const int up = b.phase("switch-reduce"), down = b.phase("switch-multicast");
  const Endpoint plane = Endpoint::switch_plane(domain);
  std::vector<Endpoint> everyone;
  for (int r = 0; r < n; ++r) everyone.push_back(Endpoint::rank(r));
  Streams streams;
  for (int c = 0; c < k && n > 1; ++c) {
    for (int r = 0; r < n; ++r) streams.record(0, r, b.transfer(Endpoint::rank(r), {plane}, c, 1, true, up, streams.after(0, r)));
    b.transfer(plane, everyone, c, 1, false, down);  // goes once the plane has chunk c from everyone
  }
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_reduce_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/nvls", terms);
  nvls_model(b);
  return finish(b);
}

}  // namespace racksim

