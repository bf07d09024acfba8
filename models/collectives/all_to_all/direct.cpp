// all_to_all/direct: every rank sends bytes / n to every other rank at once, as NCCL's all-to-all (a
// group of n-1 sends and receives per rank) does; the expert-parallel dispatch/combine pattern. Chunk
// s*n + d is what rank s sends to rank d. All n(n-1) transfers start together and share the links they
// cross (inside an NVLink domain a GPU's port carries its n-1 outgoing flows; across domains its NIC
// does). No pipelining: --chunk-bytes does not apply.
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/schedule_builder.hpp"

namespace racksim {

Schedule build_all_to_all_direct(const CollectiveRequest& request, const TopologyGraph&) {
  const int n = static_cast<int>(request.gpus.size());
  ScheduleBuilder b(request, "all_to_all/direct", n * n);
  b.reserve(static_cast<long>(n) * (n - 1));
  const int phase = b.phase("all-to-all");
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) b.transfer(Endpoint::rank(s), {Endpoint::rank(d)}, s * n + d, 1, false, phase);
  if (request.chunk_bytes > 0) b.append_note("chunk_bytes ignored: all-to-all sends each piece whole");
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_to_all_direct(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_to_all/direct", terms);
  const double S = static_cast<double>(request.bytes);
  const int n = b.n;
  std::vector<int> vertices;
  for (int s = 0; s < n; ++s) vertices.push_back(b.v(s));
  if (n > 1) b.m.stages.push_back({"all-to-all", b.fc.all_to_all_stage(vertices), ceil_div(S, n), 1});
  b.m.pipelined = false;
  b.m.unit_bytes = ceil_div(S, n);
  b.m.tasks_fixed = b.m.transfers_fixed = static_cast<long>(n) * (n - 1);
  return finish(b);
}

}  // namespace racksim

