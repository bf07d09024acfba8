// all_reduce/tree: NCCL's double binary tree (src/graph/trees.cc). Two binary trees over the ranks, the
// second the mirror (n even) or shift by one (n odd) of the first, so that most ranks are inner nodes in
// one tree and leaves in the other; each tree carries half the buffer. For every chunk a tree reduces
// towards its root (a rank sends its partial sum to its parent once all its children's have arrived)
// and the root's result is broadcast back down. Chunks pipeline through the tree levels: each
// (rank, tree, direction, peer) is a stream that sends chunk c+1 after chunk c. Latency grows with the
// tree height ~log2 n instead of n, which is why NCCL prefers it for small messages across many ranks.
// Chunk t*k + j is piece j of tree t's half; k chosen like nvls (or from --chunk-bytes, per tree half).
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

Schedule build_all_reduce_tree(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size());
  const int k = depth.depth;
  ScheduleBuilder b(request, "all_reduce/tree", 2 * k);
  b.reserve(depth.tasks);
  const int up = b.phase("reduce-up"), down = b.phase("broadcast-down");
  std::vector<int> members(n);
  for (int i = 0; i < n; ++i) members[i] = i;
  std::array<std::vector<ChunkRange>, 2> pieces;
  for (int t = 0; t < 2; ++t)
    for (int j = 0; j < k; ++j) pieces[t].push_back({t * k + j, 1});
  const DoubleTree tree = double_binary_tree(n);
  Streams streams;
  if (n > 1) tree_all_reduce(b, members, tree, pieces, up, down, streams, 0);
  b.append_note("tree height " + std::to_string(tree.height));
  b.append_note(depth.note);
  return b.finish();
}

}  // namespace racksim
