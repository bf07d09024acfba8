// all_reduce/tree: NCCL's tree (src/graph/connect.cc:50-62, src/graph/trees.cc). Inside each node (an NVLink
// domain, or the GPUs of a tray without NVLink) the ranks form a chain whose first rank is the node's head;
// the heads form two binary trees across nodes, the second the mirror (even) or shift by one (odd) of the
// first, so that most heads are inner nodes in one tree and leaves in the other; each tree carries half the
// buffer. For every chunk the ranks reduce towards the root (a rank sends its partial sum to its parent once
// its children's have arrived) and the root's result is broadcast back down. Chunks pipeline: each (rank,
// tree, direction, peer) is a stream that sends chunk c+1 after chunk c, so the pipeline fills in about
// (chain length + tree height) chunk times -- long on a 72-GPU NVLink domain, which is why NCCL prefers it
// only for small messages across many nodes. Chunk t*k + j is piece j of tree t's half.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_reduce_tree(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  const std::vector<DoubleTree> trees = nccl_trees(request, graph);  // one per NIC rail across nodes
  const int rails = static_cast<int>(trees.size());
  ScheduleBuilder b(request, "all_reduce/tree", rails * 2 * k);
  b.reserve(depth.tasks);
  const int up = b.phase("reduce-up"), down = b.phase("broadcast-down");
  std::vector<int> members(n);
  for (int i = 0; i < n; ++i) members[i] = i;
  Streams streams;
  for (int j = 0; j < rails && n > 1; ++j) {
    std::array<std::vector<ChunkRange>, 2> pieces;  // tree j, half t, piece p: chunk (2j + t) k + p
    for (int t = 0; t < 2; ++t)
      for (int p = 0; p < k; ++p) pieces[t].push_back({(2 * j + t) * k + p, 1});
    tree_all_reduce(b, members, trees[j], pieces, up, down, streams, 4 * j);
  }
  b.append_note("tree height " + std::to_string(trees.front().height) +
                (rails > 1 ? ", " + std::to_string(rails) + " trees, one per NIC rail" : ""));
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_reduce_tree(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/tree", terms);
  tree_model(b);
  return finish(b);
}

}  // namespace racksim

