// all_gather/nvls: NVLink SHARP multicast all-gather. Each rank sends its own piece (bytes / n, cut into
// k pipeline chunks) once to the domain's switch plane, which multicasts it to the n-1 other ranks: a
// rank sends S/n and receives (n-1)/n * S, every multicast chunk costing its sender one port crossing
// instead of n-1. Chunk j*n + l is piece j of rank l's share. Requires multicast_reduction and one
// NVLink domain.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_gather_nvls(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int domain = nvls_domain(request, graph);
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "all_gather/nvls", n * k);
  b.reserve(depth.tasks);
  const int up = b.phase("to-switch"), down = b.phase("switch-multicast");
  const Endpoint plane = Endpoint::switch_plane(domain);
  Streams streams;
  for (int j = 0; j < k && n > 1; ++j)
    for (int l = 0; l < n; ++l) {
      const int c = j * n + l;
      streams.record(0, l, b.transfer(Endpoint::rank(l), {plane}, c, 1, false, up, streams.after(0, l)));
      std::vector<Endpoint> others;
      for (int r = 0; r < n; ++r)
        if (r != l) others.push_back(Endpoint::rank(r));
      streams.record(1, l, b.transfer(plane, others, c, 1, false, down, streams.after(1, l)));
    }
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_gather_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_gather/nvls", terms);
  nvls_model(b);
  return finish(b);
}

}  // namespace racksim

