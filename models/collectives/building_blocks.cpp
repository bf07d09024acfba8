#include "models/collectives/building_blocks.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "models/analytic/cost_model.hpp"
#include "models/collectives/chunk_layout.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

namespace {

std::string rings_note(int rings) { return std::to_string(rings) + " rings, one per NIC rail (NCCL's ring channels)"; }

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

std::optional<RingSymmetry> rail_ring_symmetry(const CollectiveRequest& request, const TopologyGraph& graph,
                                               const std::vector<std::vector<int>>& orders) {
  const auto nodes = nccl_nodes(request, graph);
  const int n = static_cast<int>(request.gpus.size());
  if (n < 2 || orders.empty()) return std::nullopt;
  // The turns a candidate starts from: each node's first rank; inside one node (one ring in request order) each
  // rank, so the candidates are the ring's n rotations (whether the NVLink domain's routes share them is the
  // engine's check, as across nodes).
  int k = static_cast<int>(nodes.size()), local = static_cast<int>(nodes.front().size());
  if (k < 2) {
    k = n;
    local = 1;
  } else {
    for (const auto& node : nodes)
      if (static_cast<int>(node.size()) != local) return std::nullopt;  // uneven nodes: no rotation maps them
  }
  for (const auto& order : orders)
    if (static_cast<int>(order.size()) != n) return std::nullopt;
  const int rings = static_cast<int>(orders.size());
  // Positions of each rank in each ring.
  std::vector<std::vector<int>> position(rings, std::vector<int>(n, -1));
  for (int j = 0; j < rings; ++j)
    for (int p = 0; p < n; ++p) position[j][orders[j][p]] = p;
  // Where a map takes ring r: onto ring j turned by t (its position p to j's p + t), or (-1, -1) when onto no ring.
  const auto ring_image = [&](const std::vector<int>& map, int r) -> std::pair<int, int> {
    const int first = map[orders[r][0]];
    for (int target = 0; target < rings; ++target) {
      const int shift = position[target][first];
      bool same = true;
      for (int p = 1; p < n && same; ++p) same = orders[target][(shift + p) % n] == map[orders[r][p]];
      if (same) return {target, shift};
    }
    return {-1, -1};
  };
  // A candidate takes ring 0 onto ring j read from the start of node m; it is kept when it takes every ring onto a
  // ring (then it maps the rings' tasks onto theirs: a step's dependencies are its ring predecessor's previous step
  // and its own previous send, both kept).
  RingSymmetry sym;
  std::map<std::pair<int, int>, int> element;  // (ring, node) -> index into rank_maps
  for (int j = 0; j < rings; ++j)
    for (int m = 0; m < k; ++m) {
      std::vector<int> map(n);
      for (int p = 0; p < n; ++p) map[orders[0][p]] = orders[j][(p + m * local) % n];
      std::vector<std::pair<int, int>> images(rings);
      bool kept = true;
      for (int r = 0; r < rings && kept; ++r) kept = (images[r] = ring_image(map, r)).first >= 0;
      if (!kept) continue;
      element.emplace(std::pair{j, m}, static_cast<int>(sym.rank_maps.size()));
      sym.rank_maps.push_back(std::move(map));
      sym.image.push_back(std::move(images));
    }
  if (sym.rank_maps.size() < 2) return std::nullopt;
  // Distinct elements (two rings turned alike would give one map twice, and the orbits would be counted twice).
  std::map<std::pair<int, int>, int> by_start;  // images of ring 0's first two ranks -> element
  for (int e = 0; e < static_cast<int>(sym.rank_maps.size()); ++e) {
    const auto& map = sym.rank_maps[e];
    const auto [at, added] = by_start.emplace(std::pair{map[orders[0][0]], map[orders[0][1]]}, e);
    if (!added && sym.rank_maps[at->second] == map) return std::nullopt;
  }
  // Closed under composition: the orbits of a group are classes of copies. Ring 0 holds every rank, so a map is
  // known by where it takes ring 0; a product of two maps takes it onto a ring (turned), found by where it takes
  // ring 0's first two ranks (and checked rank by rank where two rings hold that pair of neighbours), which must
  // be an element: O(elements^2 x rings), where comparing whole products was O(elements^2 x ranks) (4 608 GPUs:
  // 512 elements, 1.2 G steps).
  std::unordered_map<std::uint64_t, std::vector<std::pair<int, int>>> at_pair;  // (rank, next rank) -> (ring, position)
  for (int j = 0; j < rings; ++j)
    for (int p = 0; p < n; ++p)
      at_pair[static_cast<std::uint64_t>(orders[j][p]) << 32 | static_cast<std::uint32_t>(orders[j][(p + 1) % n])]
          .emplace_back(j, p);
  for (const auto& a : sym.rank_maps)
    for (const auto& b : sym.rank_maps) {
      const int c0 = a[b[orders[0][0]]], c1 = a[b[orders[0][1]]];
      const auto found = at_pair.find(static_cast<std::uint64_t>(c0) << 32 | static_cast<std::uint32_t>(c1));
      if (found == at_pair.end()) return std::nullopt;
      bool closed = false;
      for (const auto& [j, p] : found->second) {
        if (p % local != 0) continue;
        const auto e = element.find({j, p / local});
        if (e == element.end()) continue;
        bool same = found->second.size() == 1;
        if (!same) {
          same = true;
          for (int r = 0; r < n && same; ++r) same = a[b[r]] == sym.rank_maps[e->second][r];
        }
        if (same) {
          closed = true;
          break;
        }
      }
      if (!closed) return std::nullopt;
    }
  // The orbits of the rings under the group, each listed by its lowest ring, and that ring's period: the least turn
  // the elements taking it onto itself give it (they turn it by every multiple of the period, a group's stabiliser).
  std::vector<int> orbit_of(rings, -1);
  for (int r = 0; r < rings; ++r) {
    if (orbit_of[r] >= 0) continue;
    for (const auto& images : sym.image) orbit_of[images[r].first] = r;
    sym.listed_rings.push_back(r);
  }
  for (int r : sym.listed_rings) {
    int period = n;
    std::vector<int> turns;
    for (const auto& images : sym.image)
      if (images[r].first == r) turns.push_back(images[r].second);
    for (int t : turns)
      if (t > 0) period = std::min(period, t);
    if (n % period != 0 || static_cast<int>(turns.size()) != n / period) return std::nullopt;
    for (int t : turns)
      if (t % period != 0) return std::nullopt;
    sym.periods.push_back(period);
  }
  return sym;
}

std::optional<Schedule> ring_quotient_schedule(const CollectiveRequest& request, const TopologyGraph& graph,
                                               const std::string& algorithm, bool owned_by_rank, bool reduce_scatter,
                                               bool all_gather) {
  const auto orders = nccl_ring_orders(request, graph);
  const std::optional<RingSymmetry> found = rail_ring_symmetry(request, graph, orders);
  if (!found) return std::nullopt;
  const RingSymmetry& symmetry = *found;
  const DepthChoice depth = planned_depth(graph, request);
  const int n = static_cast<int>(request.gpus.size()), rings = static_cast<int>(orders.size());
  const int pieces = depth.depth, halves = (reduce_scatter ? 1 : 0) + (all_gather ? 1 : 0);
  const int chunks = rings * n * pieces;
  long listed = 0;
  for (int period : symmetry.periods) listed += static_cast<long>(n - 1) * period * pieces * halves;
  // What it lists must fit the engine's transfer cap, as a full schedule's does.
  if (listed > kMaxTransfers) return std::nullopt;
  Schedule s;
  s.request = request;
  s.algorithm = algorithm;
  s.chunks = chunks;
  if (rings > 1) s.note = rings_note(rings);                                      // as note_rings
  if (!depth.note.empty()) s.note += (s.note.empty() ? "" : "; ") + depth.note;  // as note_depth
  if (depth.nccl_chunks > 0) {
    s.pipeline_pieces = depth.depth;
    s.nccl_chunks = depth.nccl_chunks;
  }
  if (reduce_scatter) s.phases.push_back("reduce-scatter");
  if (all_gather) s.phases.push_back("all-gather");
  s.tasks.reserve(static_cast<std::size_t>(listed));
  auto sym = std::make_shared<ScheduleSymmetry>();
  const int group = static_cast<int>(symmetry.rank_maps.size());
  // The orbit's mean bytes. Chunks are piece_bytes of the buffer (chunk_layout.hpp): the first `extra` chunks carry
  // a byte more, so the images of a listed task differ by a byte where the buffer does not divide (100 KiB over 576
  // ranks x 16 rings: 11 or 12 bytes). An image takes ring r's position i onto ring j's i + turn, whose chunk is
  // (j x pieces + k) x n + key: every image on a ring whose chunks all come before `extra` has the byte, none after;
  // only the ring where `extra` falls is counted image by image.
  const std::uint64_t base_bytes = request.bytes / static_cast<std::uint64_t>(chunks);
  const long extra = static_cast<long>(request.bytes % static_cast<std::uint64_t>(chunks));
  const long first_full = extra / n, last_part = extra % n;  // chunks < extra: ring-pieces < first_full, then part
  for (std::size_t a = 0; a < symmetry.listed_rings.size(); ++a) {
    const int ring = symmetry.listed_rings[a], period = symmetry.periods[a];
    const std::vector<int>& order = orders[ring];
    const std::vector<Segment> segments = ring_segments(order, pieces, ring, owned_by_rank);
    std::vector<std::vector<int>> turns(rings);  // per ring: the turns of the elements taking this ring onto it
    for (const auto& images : symmetry.image) turns[images[ring].first].push_back(images[ring].second);
    const auto orbit_mean = [&](int step, int i, int k, int offset) {
      long with_byte = 0;
      for (int j = 0; j < rings; ++j) {
        if (turns[j].empty()) continue;
        const long ring_piece = static_cast<long>(j) * pieces + k;
        if (ring_piece < first_full) {
          with_byte += static_cast<long>(turns[j].size());
        } else if (ring_piece == first_full) {
          for (int turn : turns[j]) {
            const int seg = (((i + turn - step - offset) % n) + n) % n;
            const long key = owned_by_rank ? orders[j][seg] : seg;
            with_byte += key < last_part ? 1 : 0;
          }
        }
      }
      return static_cast<double>(base_bytes) + static_cast<double>(with_byte) / group;
    };
    // Listed task of (half, step, position i < period, piece): this ring's tasks in the builder's order.
    const long base = static_cast<long>(s.tasks.size());
    const long per_half = static_cast<long>(n - 1) * period * pieces;
    const long ag_base = base + (reduce_scatter ? per_half : 0);
    const auto id = [&](bool ag, int step, int i, int k) {
      return static_cast<int>((ag ? ag_base : base) + (static_cast<long>(step) * period + i) * pieces + k);
    };
    for (int half = 0; half < 2; ++half) {
      const bool ag = half == 1;
      if ((ag && !all_gather) || (!ag && !reduce_scatter)) continue;
      const int phase = ag && reduce_scatter ? 1 : 0;
      const int offset = ag ? 0 : 1;
      for (int step = 0; step < n - 1; ++step)
        for (int i = 0; i < period; ++i) {
          const int seg = ((i - step - offset) % n + n) % n;
          const int before = (i - 1 + period) % period;  // the ring predecessor's orbit
          for (int k = 0; k < pieces; ++k) {
            Task t;
            t.deps.reserve(2);
            t.id = static_cast<int>(s.tasks.size());
            t.src = Endpoint::rank(order[i]);
            t.dsts = {Endpoint::rank(order[(i + 1) % n])};
            t.chunk = segments[seg][k].first;
            t.chunk_count = segments[seg][k].count;
            t.bytes = chunk_range_bytes(request.op, request.bytes, n, chunks, t.chunk, t.chunk_count);
            t.reduce = !ag;
            t.phase = phase;
            // Data: what the predecessor sent this piece in the previous step (the reduce-scatter's last step for
            // the all-gather's first, where the segment was reduced); none where the rank's own data goes.
            if (step > 0) t.deps.push_back(id(ag, step - 1, before, k));
            else if (ag && reduce_scatter) t.deps.push_back(id(false, n - 2, before, k));
            // Order: the rank's previous send on its connection (one stream per ring and rank).
            if (k > 0) t.deps.push_back(id(ag, step, i, k - 1));
            else if (step > 0) t.deps.push_back(id(ag, step - 1, i, pieces - 1));
            else if (ag && reduce_scatter) t.deps.push_back(id(false, n - 2, i, pieces - 1));
            std::sort(t.deps.begin(), t.deps.end());
            if (extra > 0) sym->mean_bytes.push_back(orbit_mean(step, i, k, offset));
            s.tasks.push_back(std::move(t));
          }
        }
    }
  }
  sym->rank_maps = symmetry.rank_maps;
  sym->full_tasks = listed * static_cast<long>(group);
  s.symmetry = std::move(sym);
  return s;
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
  b.append_note(rings_note(rings));
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
