// reduce_scatter/nvls: NVLink SHARP reduce-scatter. Each rank sends its whole input (S, cut into k
// pipeline pieces of S/k covering every owner's share) to the domain's switch plane, which reduces the
// contributions and sends rank l only its own share: a rank sends S and receives S/n. Chunk j*n + l is
// piece j of rank l's share. Requires multicast_reduction and one NVLink domain.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_reduce_scatter_nvls(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int domain = nvls_domain(request, graph);
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "reduce_scatter/nvls", n * k);
  b.reserve(depth.tasks);
  const int up = b.phase("switch-reduce"), down = b.phase("switch-scatter");
  const Endpoint plane = Endpoint::switch_plane(domain);
  Streams streams;
  for (int j = 0; j < k && n > 1; ++j) {
    for (int r = 0; r < n; ++r)
      streams.record(0, r, b.transfer(Endpoint::rank(r), {plane}, j * n, n, true, up, streams.after(0, r)));
    for (int l = 0; l < n; ++l)
      streams.record(1, l, b.transfer(plane, {Endpoint::rank(l)}, j * n + l, 1, false, down, streams.after(1, l)));
  }
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_reduce_scatter_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "reduce_scatter/nvls", terms);
  nvls_model(b);
  return finish(b);
}

}  // namespace racksim

