#include "models/collectives/building_blocks.hpp"

#include <algorithm>
#include <string>

#include "models/analytic/cost_model.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

namespace {

void ring_steps(ScheduleBuilder& b, const std::vector<int>& members, const std::vector<Segment>& segments, int phase,
                bool reduce, int offset, Streams* streams, int stream_tag) {
  const int g = static_cast<int>(members.size());
  for (int s = 0; s < g - 1; ++s) {
    for (int i = 0; i < g; ++i) {
      const int seg = ((i - s - offset) % g + g) % g;
      const int src = members[i];
      const int dst = members[(i + 1) % g];
      for (const auto& piece : segments[seg]) {
        const int after = streams ? streams->last(stream_tag, src) : -1;
        const int id = b.transfer_one(Endpoint::rank(src), Endpoint::rank(dst), piece.first, piece.count, reduce, phase,
                                      after);
        if (streams) streams->record(stream_tag, src, id);
      }
    }
  }
}

}  // namespace

std::vector<Segment> interleaved_segments(int n, int p) {
  std::vector<Segment> segments(n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) segments[i].push_back({j * n + i, 1});
  return segments;
}

std::vector<std::vector<int>> nccl_ring_orders(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int n = static_cast<int>(request.gpus.size());
  const auto nodes = nccl_nodes(request, graph);
  if (nodes.size() <= 1) {
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    return {all};
  }
  int local = n;
  for (const auto& node : nodes) local = std::min(local, static_cast<int>(node.size()));
  const int rings = nccl_rails(request, graph);
  std::vector<std::vector<int>> orders(rings);
  for (int j = 0; j < rings; ++j) {
    const int rail = static_cast<int>(static_cast<long>(j) * local / rings);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const auto& node = nodes[k];
      const int size = static_cast<int>(node.size());
      for (int i = 0; i < size; ++i) {
        // even nodes: rail, rail+1, ..., rail-1; odd nodes: rail-1, rail-2, ..., rail
        const int pos = k % 2 == 0 ? (rail + i) % size : ((rail - 1 - i) % size + size) % size;
        orders[j].push_back(node[pos]);
      }
    }
  }
  return orders;
}

void check_ring_transfers(int n, int rings, long transfers) {
  if (transfers <= kMaxTransfers) return;
  throw EngineLimitError("--gpus", "", std::to_string(n) + " ranks in " + std::to_string(rings) + " rings",
                         "at most " + std::to_string(kMaxTransfers) + " transfers for the engine (this ring needs " +
                             std::to_string(transfers) +
                             "); the analytic model prices it (--model analytic or auto, racksim.analytic, plan), as the "
                             "engine would within 0.5 % for a ring running alone (docs/model.md section 4)");
}

void note_depth(ScheduleBuilder& b, const DepthChoice& depth) {
  b.append_note(depth.note);
  if (depth.nccl_chunks > 0) b.note_lowered_pipeline(depth.depth, depth.nccl_chunks);
}

void note_rings(ScheduleBuilder& b, int rings) {
  if (rings <= 1) return;
  b.append_note(std::to_string(rings) + " rings, one per NIC rail (NCCL's ring channels)");
}

std::vector<std::vector<int>> nccl_chain_orders(const CollectiveRequest& request, const TopologyGraph& graph) {
  auto orders = nccl_ring_orders(request, graph);
  for (auto& order : orders) {
    const auto at = std::find(order.begin(), order.end(), request.root);
    if (at != order.end()) std::rotate(order.begin(), at, order.end());
  }
  return orders;
}

void chain_transfers(ScheduleBuilder& b, const std::vector<std::vector<int>>& chains, int k, int phase, bool towards_root) {
  Streams streams;
  const int first = towards_root ? 1 : 0;
  for (int c = 0; c < k; ++c)
    for (int j = 0; j < static_cast<int>(chains.size()); ++j) {
      const auto& chain = chains[j];
      const int n = static_cast<int>(chain.size());
      for (int h = first; h < first + n - 1; ++h) {
        const int src = chain[h], dst = chain[(h + 1) % n];
        streams.record(j, src, b.transfer(Endpoint::rank(src), {Endpoint::rank(dst)}, j * k + c, 1, towards_root, phase,
                                          streams.after(j, src)));
      }
    }
}

std::vector<Segment> ring_segments(const std::vector<int>& order, int p, int ring, bool owned_by_rank) {
  const int n = static_cast<int>(order.size());
  std::vector<Segment> segments(n);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < p; ++t) segments[i].push_back({(ring * p + t) * n + (owned_by_rank ? order[i] : i), 1});
  return segments;
}

void ring_reduce_scatter(ScheduleBuilder& b, const std::vector<int>& members, const std::vector<Segment>& segments,
                         int phase, Streams* streams, int stream_tag) {
  ring_steps(b, members, segments, phase, true, 1, streams, stream_tag);
}

void ring_all_gather(ScheduleBuilder& b, const std::vector<int>& members, const std::vector<Segment>& segments,
                     int phase, Streams* streams, int stream_tag) {
  ring_steps(b, members, segments, phase, false, 0, streams, stream_tag);
}

void tree_all_reduce(ScheduleBuilder& b, const std::vector<int>& members, const DoubleTree& tree,
                     const std::array<std::vector<ChunkRange>, 2>& pieces, int up_phase, int down_phase,
                     Streams& streams, int stream_tag) {
  const int n = b.ranks();
  const std::size_t depth = std::max(pieces[0].size(), pieces[1].size());
  // Stream keys (rank ids, so that several groups can share `streams`): up per (tree, rank); down per
  // (tree, rank * n + child rank).
  for (std::size_t j = 0; j < depth; ++j) {
    for (int t = 0; t < 2; ++t) {
      if (j >= pieces[t].size()) continue;
      const auto& piece = pieces[t][j];
      for (auto it = tree.order[t].rbegin(); it != tree.order[t].rend(); ++it) {
        const int m = *it;
        const int parent = tree.parent[t][m];
        if (parent < 0) continue;
        const int tag = stream_tag + t;
        const int id = b.transfer(Endpoint::rank(members[m]), {Endpoint::rank(members[parent])}, piece.first,
                                  piece.count, true, up_phase, streams.after(tag, members[m]));
        streams.record(tag, members[m], id);
      }
    }
    for (int t = 0; t < 2; ++t) {
      if (j >= pieces[t].size()) continue;
      const auto& piece = pieces[t][j];
      for (int m : tree.order[t]) {
        for (int child : tree.children[t][m]) {
          const int tag = stream_tag + 2 + t;
          const int key = members[m] * n + members[child];
          const int id = b.transfer(Endpoint::rank(members[m]), {Endpoint::rank(members[child])}, piece.first,
                                    piece.count, false, down_phase, streams.after(tag, key));
          streams.record(tag, key, id);
        }
      }
    }
  }
}

}  // namespace racksim
