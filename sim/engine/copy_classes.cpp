// The classes of symmetric copies of a compiled run (copy_classes.hpp; what aggregation.cpp simulates once each).
#include "sim/engine/copy_classes.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace racksim::copy_classes {

namespace {

// A run shrinks by less than this factor: the full run is simulated (the refinement's cost is wasted
// only where symmetry is weak, and the full run is the reference).
constexpr double kMinShrink = 2.0;
// Colour refinement stops growing after a few rounds on collectives (the initial colours carry each
// task's depth in the DAG); a run still splitting after this many has too little symmetry to pay.
constexpr int kMaxRounds = 200;

[[gnu::always_inline]] inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: a bijection with good avalanche
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
[[gnu::always_inline]] inline std::uint64_t combine(std::uint64_t h, std::uint64_t v) { return mix(h * 0x9e3779b97f4a7c15ull ^ mix(v)); }

// Sizes this close are one size: a collective's chunks are S / N rounded, so copies differ by a byte or
// so (1 GiB over 72 ranks: 14 913 080 and 14 913 081 B; 1 MiB over 144 ranks and 16 rings: 455 and 456 B).
// The quotient moves the class's mean size, so the bytes on every link are kept; a transfer's time can
// move by kSameSizeBytes at the link's rate (16 B at 50 GB/s: 0.3 ns a step) or kSameSizeFraction of itself.
constexpr double kSameSizeFraction = 1e-3;
constexpr double kSameSizeBytes = 16;

// Group ids of values (sorted distinct values; a group spans at most kSameSize of its smallest). The
// distinct values are few (a collective's chunk sizes) and mostly repeat in runs: they are collected
// with a hash map and only they are sorted (sorting all 10 000-20 000 values was ~4 % of a 72-GPU run).
std::vector<int> size_groups(const std::vector<double>& values) {
  std::unordered_map<double, int> group;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (i == 0 || values[i] != values[i - 1]) group.emplace(values[i], 0);
  std::vector<double> distinct;
  distinct.reserve(group.size());
  for (const auto& [v, id] : group) distinct.push_back(v);
  std::sort(distinct.begin(), distinct.end());
  double start = 0;
  int id = -1;
  for (double v : distinct) {
    if (id < 0 || v > start + std::max(kSameSizeBytes, kSameSizeFraction * std::abs(start))) {
      start = v;
      ++id;
    }
    group[v] = id;
  }
  std::vector<int> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = (i > 0 && values[i] == values[i - 1]) ? out[i - 1] : group.at(values[i]);
  return out;
}

// Dense class ids in order of first appearance (deterministic). An open-addressing table over the
// hashes themselves (they are mixed already), its buffers kept between the refinement's rounds: the
// std::unordered_map this replaces allocated a node per class member in every round.
class Relabeler {
 public:
  int operator()(const std::vector<std::uint64_t>& hashes, std::vector<int>& ids) {
    std::size_t capacity = 16;
    while (capacity < 2 * hashes.size()) capacity <<= 1;  // at most half full: short probe runs
    keys_.resize(capacity);
    slots_.assign(capacity, -1);
    const std::size_t mask = capacity - 1;
    ids.resize(hashes.size());
    int classes = 0;
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      const std::uint64_t h = hashes[i];
      std::size_t k = static_cast<std::size_t>(h) & mask;
      while (slots_[k] >= 0 && keys_[k] != h) k = (k + 1) & mask;
      if (slots_[k] < 0) {
        keys_[k] = h;
        slots_[k] = classes++;
      }
      ids[i] = slots_[k];
    }
    return classes;
  }

 private:
  std::vector<std::uint64_t> keys_;
  std::vector<int> slots_;
};

// What must be equal inside a class besides its neighbours' classes.
std::uint64_t task_attributes(const Structure& s, const CompiledRun& r, int t) {
  std::uint64_t h = mix(static_cast<std::uint64_t>(r.task_schedule[t]));
  h = combine(h, static_cast<std::uint64_t>(r.pending[t]));
  h = combine(h, static_cast<std::uint64_t>(r.phase[t] + 1));
  h = combine(h, static_cast<std::uint64_t>(s.task_size[t]));
  h = combine(h, r.flags[t]);
  h = combine(h, bits_of(r.task_delay_s[t]));
  return combine(h, static_cast<std::uint64_t>(r.part_offset[t + 1] - r.part_offset[t]));
}
std::uint64_t part_attributes(const Structure& s, const CompiledRun& r, int p) {
  const int route = r.part_route[p];
  std::uint64_t h = mix(static_cast<std::uint64_t>(s.part_size[p]));
  h = combine(h, bits_of(r.route_latency_s[route]));
  h = combine(h, r.route_src[route] == r.route_dst[route] ? 1 : 2);
  return combine(h, r.part_rank[p] >= 0 ? 1 : 2);
}

// One kind of item of the refinement (tasks, parts, directed links or hosts) with its classes. Class ids
// are stable: when a class splits, its largest part keeps the id and only the other members take new ids
// (so a member moves O(log n) times in all), and an item whose neighbours kept their ids keeps its
// signature: a round re-hashes only the items next to the last round's moves (the dirty ones). Signatures
// leave the item's own class out; items are grouped by (class, signature), and the members not re-hashed
// carry the signature their class was formed with (class_sig).
struct RefineKind {
  std::vector<int>* colour = nullptr;
  std::vector<std::uint64_t> sig;        // per item: its latest signature (== class_sig of its class between rounds)
  std::vector<std::uint64_t> class_sig;  // per id
  std::vector<char> has_sig;             // per id: class_sig set (not before the id's first round)
  std::vector<std::vector<int>> members;  // per id
  std::vector<int> position;              // per item: its index in members[its id]
  int classes = 0;
  std::vector<char> is_dirty;
  std::vector<int> dirty;

  void init(std::vector<int>& c, int ids, int items) {
    colour = &c;
    sig.assign(items, 0);
    class_sig.assign(ids, 0);
    has_sig.assign(ids, 0);
    members.assign(ids, {});
    position.resize(items);
    for (int i = 0; i < items; ++i) {
      position[i] = static_cast<int>(members[c[i]].size());
      members[c[i]].push_back(i);
    }
    classes = ids;
    is_dirty.assign(items, 1);
    dirty.resize(items);
    for (int i = 0; i < items; ++i) dirty[i] = i;
  }
  void mark(int i) {
    if (!is_dirty[i]) {
      is_dirty[i] = 1;
      dirty.push_back(i);
    }
  }
  int new_id(std::uint64_t signature) {
    members.emplace_back();
    class_sig.push_back(signature);
    has_sig.push_back(1);
    return static_cast<int>(members.size()) - 1;
  }
  // This round's moves (item, new id), from the dirty items' signatures (already in `sig`).
  void split(std::vector<std::pair<int, int>>& moves) {
    moves.clear();
    const std::vector<int>& c = *colour;
    // The dirty items grouped by class (a counting sort: classes in order of first dirty member, items in
    // dirty order within each), a deterministic order; which member comes first changes no partition.
    slot_.resize(members.size(), -1);
    touched_.clear();
    start_.clear();
    for (int i : dirty) {
      int& slot = slot_[c[i]];
      if (slot < 0) {
        slot = static_cast<int>(touched_.size());
        touched_.push_back(c[i]);
        start_.push_back(0);
      }
      ++start_[slot];
    }
    for (std::size_t g = 0, sum = 0; g < start_.size(); ++g) {
      const std::size_t n = static_cast<std::size_t>(start_[g]);
      start_[g] = static_cast<int>(sum);
      sum += n;
    }
    start_.push_back(static_cast<int>(dirty.size()));
    order_.resize(dirty.size());
    fill_.assign(start_.begin(), start_.end() - 1);
    for (int i : dirty) order_[static_cast<std::size_t>(fill_[slot_[c[i]]]++)] = i;
    for (int id : touched_) slot_[id] = -1;
    for (std::size_t g = 0; g < touched_.size(); ++g) {
      const int id = touched_[g];
      const std::size_t k = static_cast<std::size_t>(start_[g]), end = static_cast<std::size_t>(start_[g + 1]);
      auto item = [&](std::size_t j) { return order_[j]; };
      const int size = static_cast<int>(members[id].size());
      const int clean = size - static_cast<int>(end - k);
      std::uint64_t stay = has_sig[id] ? class_sig[id] : sig[item(k)];
      // Groups of the dirty members by signature (sorted by it: a class may split many ways in one round);
      // the one of `stay` also holds the members not re-hashed.
      groups_.clear();
      for (std::size_t j = k; j < end; ++j) groups_.push_back({sig[item(j)], 1, -1});
      std::sort(groups_.begin(), groups_.end(), [](const Group& x, const Group& y) { return x.sig < y.sig; });
      std::size_t distinct = 0;
      for (std::size_t j = 0; j < groups_.size(); ++j) {
        if (distinct > 0 && groups_[distinct - 1].sig == groups_[j].sig) {
          ++groups_[distinct - 1].members;
        } else {
          groups_[distinct++] = groups_[j];
        }
      }
      groups_.resize(distinct);
      auto group = [&](std::uint64_t g) -> Group* {
        auto at = std::lower_bound(groups_.begin(), groups_.end(), g, [](const Group& x, std::uint64_t v) { return x.sig < v; });
        return at != groups_.end() && at->sig == g ? &*at : nullptr;
      };
      int stay_count = clean + (group(stay) ? group(stay)->members : 0);
      if (stay_count == 0) {  // every member re-hashed, none as before: the first member's group is the class now
        stay = sig[item(k)];
        stay_count = group(stay)->members;
      }
      std::uint64_t keep = stay;  // the largest group keeps the id (ties: the old signature's, then the lowest)
      int keep_count = stay_count;
      for (const Group& g : groups_)
        if (g.members > keep_count) {
          keep = g.sig;
          keep_count = g.members;
        }
      class_sig[id] = keep;
      has_sig[id] = 1;
      if (stay_count == size || keep_count == size) continue;  // nothing splits
      int stay_id = stay == keep ? id : -1;
      auto target = [&](std::uint64_t g) {
        if (g == stay) {
          if (stay_id < 0) stay_id = new_id(stay);
          return stay_id;
        }
        Group* at = group(g);
        if (at->id < 0) at->id = new_id(g);
        return at->id;
      };
      if (stay == keep) {  // the members not re-hashed stay: only dirty ones move
        for (std::size_t j = k; j < end; ++j)
          if (sig[item(j)] != keep) moves.emplace_back(item(j), target(sig[item(j)]));
      } else {  // a re-hashed group keeps the id: every other member moves, in member order
        for (int i : members[id])
          if (sig[i] != keep) moves.emplace_back(i, target(sig[i]));
      }
    }
    for (int i : dirty) is_dirty[i] = 0;
    dirty.clear();
  }
  void move(int i, int to) {
    std::vector<int>& c = *colour;
    std::vector<int>& from = members[c[i]];
    const int at = position[i];
    position[from.back()] = at;
    from[at] = from.back();
    from.pop_back();
    if (from.empty()) --classes;
    if (members[to].empty()) ++classes;
    position[i] = static_cast<int>(members[to].size());
    members[to].push_back(i);
    c[i] = to;
  }

 private:
  struct Group {
    std::uint64_t sig = 0;
    int members = 0;
    int id = -1;  // its new id, once it has one
  };
  std::vector<int> slot_, touched_, start_, fill_, order_;  // split's grouping of the dirty items by class
  std::vector<Group> groups_;
};

// Dense ids in order of first appearance, as one relabelling of the final classes gives them (what the
// quotient's numbering, and so the simulation's order, depends on).
int first_appearance(std::vector<int>& colour, int ids) {
  std::vector<int> to(ids, -1);
  int next = 0;
  for (int& c : colour) {
    if (to[c] < 0) to[c] = next++;
    c = to[c];
  }
  return next;
}

}  // namespace

Csr build_csr(int n, const std::vector<std::pair<int, int>>& pairs) {  // (from, to) pairs
  Csr c;
  c.offset.assign(n + 1, 0);
  for (const auto& [a, b] : pairs) ++c.offset[a + 1];
  for (int i = 0; i < n; ++i) c.offset[i + 1] += c.offset[i];
  c.items.resize(pairs.size());
  std::vector<int> fill(c.offset.begin(), c.offset.end() - 1);
  for (const auto& [a, b] : pairs) c.items[fill[a]++] = b;
  return c;
}

Structure structure_of(const PlatformModel& model, const CompiledRun& r) {
  Structure s;
  s.tasks = r.tasks();
  s.parts = static_cast<int>(r.part_route.size());
  s.dlinks = 2 * static_cast<int>(model.links().size());
  std::unordered_map<int, int> dense;
  for (std::size_t i = 0; i < r.hosts.size(); ++i) {
    dense.emplace(r.hosts[i], static_cast<int>(s.host_id.size()));
    s.host_id.push_back(r.hosts[i]);
    s.host_speed.push_back(r.host_info[i].speed);
    s.host_cores.push_back(r.host_info[i].cores);
  }
  s.hosts = static_cast<int>(s.host_id.size());
  std::vector<std::pair<int, int>> pairs;
  for (int t = 0; t < s.tasks; ++t)
    for (int i = r.succ_offset[t]; i < r.succ_offset[t + 1]; ++i) pairs.emplace_back(r.succ[i], t);
  s.pred = build_csr(s.tasks, pairs);
  s.succ.offset = r.succ_offset;
  s.succ.items = r.succ;
  s.part_task.resize(s.parts);
  for (int t = 0; t < s.tasks; ++t)
    for (int p = r.part_offset[t]; p < r.part_offset[t + 1]; ++p) s.part_task[p] = t;
  pairs.clear();
  std::vector<std::pair<int, int>> src_pairs, dst_pairs;
  s.part_src.resize(s.parts);
  s.part_dst.resize(s.parts);
  for (int p = 0; p < s.parts; ++p) {
    const int route = r.part_route[p];
    for (int i = r.route_link_offset[route]; i < r.route_link_offset[route + 1]; ++i)
      pairs.emplace_back(p, 2 * r.route_links[i].link + (r.route_links[i].up ? 1 : 0));
    s.part_src[p] = dense.at(r.route_src[route]);
    s.part_dst[p] = dense.at(r.route_dst[route]);
    src_pairs.emplace_back(s.part_src[p], p);
    dst_pairs.emplace_back(s.part_dst[p], p);
  }
  s.part_links = build_csr(s.parts, pairs);
  for (auto& [a, b] : pairs) std::swap(a, b);
  s.link_parts = build_csr(s.dlinks, pairs);
  s.host_src_parts = build_csr(s.hosts, src_pairs);
  s.host_dst_parts = build_csr(s.hosts, dst_pairs);
  s.task_size = size_groups(r.task_bytes);
  s.part_size = size_groups(r.payload);
  return s;
}

namespace {
// Kahn's order from the dependency counts (launch tasks come after their schedules' tasks in numbering but
// are roots); shorter than the run where it is not a DAG (compile_run rules that out).
std::vector<int> topological_order(const Structure& s, const CompiledRun& r) {
  std::vector<int> order, waiting(r.pending.begin(), r.pending.end());
  order.reserve(static_cast<std::size_t>(s.tasks));
  for (int t = 0; t < s.tasks; ++t)
    if (waiting[t] == 0) order.push_back(t);
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int k = s.succ.begin(order[i]); k < s.succ.end(order[i]); ++k)
      if (--waiting[s.succ.items[k]] == 0) order.push_back(s.succ.items[k]);
  return order;
}

std::vector<int> depths_along(const Structure& s, const std::vector<int>& order) {
  std::vector<int> depth(s.tasks, 0);
  for (int t : order)
    for (int k = s.succ.begin(t); k < s.succ.end(t); ++k) depth[s.succ.items[k]] = std::max(depth[s.succ.items[k]], depth[t] + 1);
  return depth;
}
}  // namespace

// Longest path from a root, in tasks: the same for every member of an equitable class, and what lets the
// refinement settle in a few rounds instead of one round per ring step.
std::vector<int> depths(const Structure& s, const CompiledRun& r) { return depths_along(s, topological_order(s, r)); }

namespace {
// Seeds the tasks' colours with what every member of a final class shares however far it lies along the DAG, so
// that the rounds below start near the end instead of splitting a ring's positions one hop a round (48 rounds
// on a flat ring over four racks, most of the refinement's time). A task's chain hash going up is its own
// attributes and its transfers' (their initial colours, with their links' and hosts' initial colours), combined
// with the multiset of its predecessors' chain hashes; going down, the same with its successors'. Each is
// computed in one pass in (reverse) topological order, and is equal on every class of the coarsest equitable
// partition (by induction along that order: a class's members have equal attributes, transfers of equal classes
// over links and hosts of equal classes, and equal multisets of predecessor and successor classes). Seeding with
// such invariants leaves that partition, and so the quotient and its numbering, as it was; only the rounds it
// takes change. Collisions are caught by verify(), as for every hash here.
void seed_with_chains(const Structure& s, const CompiledRun& r, const std::vector<int>& order, const std::vector<std::uint64_t>& hp,
                      const std::vector<std::uint64_t>& hl, const std::vector<std::uint64_t>& hh, std::vector<std::uint64_t>& ht) {
  for (int t = 0; t < s.tasks; ++t) {  // the task's own colour with its transfers'
    std::uint64_t parts = 0;
    for (int p = r.part_offset[t]; p < r.part_offset[t + 1]; ++p) {
      std::uint64_t links = 0;
      for (int k = s.part_links.begin(p); k < s.part_links.end(p); ++k) links += mix(hl[s.part_links.items[k]]);
      std::uint64_t h = combine(hp[p], links);
      h = combine(h, hh[s.part_src[p]]);
      parts += mix(combine(h, hh[s.part_dst[p]] ^ 5));
    }
    ht[t] = combine(ht[t], parts);
  }
  if (order.size() != static_cast<std::size_t>(s.tasks)) return;
  std::vector<std::uint64_t> up(s.tasks), down(s.tasks);
  for (int t : order) {
    std::uint64_t preds = 0;
    for (int k = s.pred.begin(t); k < s.pred.end(t); ++k) preds += mix(up[s.pred.items[k]] ^ 1);
    up[t] = combine(ht[t], preds);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int t = *it;
    std::uint64_t succs = 0;
    for (int k = s.succ.begin(t); k < s.succ.end(t); ++k) succs += mix(down[s.succ.items[k]] ^ 2);
    down[t] = combine(ht[t], succs);
  }
  for (int t = 0; t < s.tasks; ++t) ht[t] = combine(up[t], down[t]);
}
}  // namespace

Partition refine(const Structure& s, const CompiledRun& r, const PlatformModel& model, std::string& why_not, bool seed_chains,
                 int* rounds) {
  Partition part;
  const std::vector<int> order = topological_order(s, r);
  const std::vector<int> depth = depths_along(s, order);
  std::vector<std::uint64_t> ht(s.tasks), hp(s.parts), hl(s.dlinks), hh(s.hosts);
  for (int t = 0; t < s.tasks; ++t) ht[t] = combine(task_attributes(s, r, t), static_cast<std::uint64_t>(depth[t]));
  for (int p = 0; p < s.parts; ++p) hp[p] = part_attributes(s, r, p);
  for (int d = 0; d < s.dlinks; ++d) hl[d] = mix(bits_of(model.links()[d / 2].bandwidth_Bps));
  for (int h = 0; h < s.hosts; ++h) hh[h] = combine(mix(bits_of(s.host_speed[h])), static_cast<std::uint64_t>(s.host_cores[h]));
  if (seed_chains) seed_with_chains(s, r, order, hp, hl, hh, ht);
  Relabeler relabel;
  part.tasks = relabel(ht, part.task);
  part.parts = relabel(hp, part.part);
  part.links = relabel(hl, part.link);
  part.hosts = relabel(hh, part.host);
  // 1-dimensional Weisfeiler-Leman: each round splits every class by its members' multisets of neighbour
  // classes. A multiset's hash is the sum of its members' mixed colours (order-free, counts multiplicity),
  // kept per item and updated as neighbours move (collisions are caught by verify() below). The partition
  // after each round is that of re-hashing every item every round; only the work differs: a round touches
  // only the items next to the last round's moves, and the chain seeds above spare the rounds in which a
  // ring's positions would split one hop further each (a flat ring over two racks: 49 rounds unseeded, 5).
  auto term = [](int colour, std::uint64_t salt) { return mix(static_cast<std::uint64_t>(colour) ^ salt); };
  std::vector<std::uint64_t> pred_sum(s.tasks, 0), succ_sum(s.tasks, 0), task_parts_sum(s.tasks, 0), part_links_sum(s.parts, 0),
      link_parts_sum(s.dlinks, 0), host_src_sum(s.hosts, 0), host_dst_sum(s.hosts, 0);
  auto sum = [&](const Csr& c, int i, const std::vector<int>& colour, std::uint64_t salt) {
    std::uint64_t acc = 0;
    for (int k = c.begin(i); k < c.end(i); ++k) acc += term(colour[c.items[k]], salt);
    return acc;
  };
  for (int t = 0; t < s.tasks; ++t) {
    pred_sum[t] = sum(s.pred, t, part.task, 1);
    succ_sum[t] = sum(s.succ, t, part.task, 2);
    for (int p = r.part_offset[t]; p < r.part_offset[t + 1]; ++p) task_parts_sum[t] += term(part.part[p], 3);
  }
  for (int p = 0; p < s.parts; ++p) part_links_sum[p] = sum(s.part_links, p, part.link, 4);
  for (int d = 0; d < s.dlinks; ++d) link_parts_sum[d] = sum(s.link_parts, d, part.part, 6);
  for (int h = 0; h < s.hosts; ++h) {
    host_src_sum[h] = sum(s.host_src_parts, h, part.part, 7);
    host_dst_sum[h] = sum(s.host_dst_parts, h, part.part, 8);
  }
  RefineKind tasks, parts, links, hosts;
  tasks.init(part.task, part.tasks, s.tasks);
  parts.init(part.part, part.parts, s.parts);
  links.init(part.link, part.links, s.dlinks);
  hosts.init(part.host, part.hosts, s.hosts);
  std::vector<std::pair<int, int>> task_moves, part_moves, link_moves, host_moves;
  for (int round = 0;; ++round) {
    if (round == kMaxRounds) {
      why_not = "the classes of copies did not settle in " + std::to_string(kMaxRounds) + " refinement rounds";
      return {};
    }
    // Signatures from the colours at the end of the last round, for every kind, before any moves.
    for (int t : tasks.dirty) tasks.sig[t] = combine(combine(mix(pred_sum[t]), succ_sum[t]), task_parts_sum[t]);
    for (int p : parts.dirty) {
      std::uint64_t h = combine(mix(static_cast<std::uint64_t>(part.task[s.part_task[p]])), part_links_sum[p]);
      h = combine(h, static_cast<std::uint64_t>(part.host[s.part_src[p]]));
      parts.sig[p] = combine(h, static_cast<std::uint64_t>(part.host[s.part_dst[p]]) ^ 5);
    }
    for (int d : links.dirty) links.sig[d] = mix(link_parts_sum[d]);
    for (int h : hosts.dirty) hosts.sig[h] = combine(mix(host_src_sum[h]), host_dst_sum[h]);
    tasks.split(task_moves);
    parts.split(part_moves);
    links.split(link_moves);
    hosts.split(host_moves);
    const bool stable = task_moves.empty() && part_moves.empty() && link_moves.empty() && host_moves.empty();
    // Apply the moves: every neighbour whose signature reads the mover's colour gets the difference and is
    // re-hashed next round.
    // The neighbours `c` lists for item i, whose multiset `sums` (with `salt`) counts i's colour.
    auto shift = [&](const Csr& c, int i, std::vector<std::uint64_t>& sums, std::uint64_t salt, int was, int to, RefineKind& kind) {
      for (int k = c.begin(i); k < c.end(i); ++k) {
        sums[c.items[k]] += term(to, salt) - term(was, salt);
        kind.mark(c.items[k]);
      }
    };
    for (const auto& [t, to] : task_moves) {
      shift(s.pred, t, succ_sum, 2, part.task[t], to, tasks);
      shift(s.succ, t, pred_sum, 1, part.task[t], to, tasks);
      for (int p = r.part_offset[t]; p < r.part_offset[t + 1]; ++p) parts.mark(p);
      tasks.move(t, to);
    }
    for (const auto& [p, to] : part_moves) {
      const int was = part.part[p];
      const int t = s.part_task[p];
      task_parts_sum[t] += term(to, 3) - term(was, 3);
      tasks.mark(t);
      shift(s.part_links, p, link_parts_sum, 6, was, to, links);
      host_src_sum[s.part_src[p]] += term(to, 7) - term(was, 7);
      host_dst_sum[s.part_dst[p]] += term(to, 8) - term(was, 8);
      hosts.mark(s.part_src[p]);
      hosts.mark(s.part_dst[p]);
      parts.move(p, to);
    }
    for (const auto& [d, to] : link_moves) {
      shift(s.link_parts, d, part_links_sum, 4, part.link[d], to, parts);
      links.move(d, to);
    }
    for (const auto& [h, to] : host_moves) {
      for (int k = s.host_src_parts.begin(h); k < s.host_src_parts.end(h); ++k) parts.mark(s.host_src_parts.items[k]);
      for (int k = s.host_dst_parts.begin(h); k < s.host_dst_parts.end(h); ++k) parts.mark(s.host_dst_parts.items[k]);
      hosts.move(h, to);
    }
    if (static_cast<double>(tasks.classes) * kMinShrink > s.tasks) {
      why_not = std::to_string(tasks.classes) + " classes of copies among " + std::to_string(s.tasks) +
                " tasks (too little symmetry to gain from aggregation)";
      return {};
    }
    if (stable) {  // each round only splits classes
      if (rounds) *rounds = round + 1;
      break;
    }
  }
  part.tasks = first_appearance(part.task, static_cast<int>(tasks.members.size()));
  part.parts = first_appearance(part.part, static_cast<int>(parts.members.size()));
  part.links = first_appearance(part.link, static_cast<int>(links.members.size()));
  part.hosts = first_appearance(part.host, static_cast<int>(hosts.members.size()));
  return part;
}

// The partition must be equitable exactly (the hashes above could collide): every member's attributes
// and sorted neighbour classes equal its class representative's.
bool verify(const Structure& s, const CompiledRun& r, const PlatformModel& model, const Partition& part) {
  auto sorted = [](const Csr& c, int i, const std::vector<int>& colour, std::vector<std::int64_t>& out) {
    const std::size_t from = out.size();
    for (int k = c.begin(i); k < c.end(i); ++k) out.push_back(colour[c.items[k]]);
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end());
    out.push_back(-1);
  };
  auto check = [](int n, const std::vector<int>& cls, int classes, const auto& signature) {
    std::vector<std::vector<std::int64_t>> rep(classes);
    std::vector<char> seen(classes, 0);
    std::vector<std::int64_t> sig;
    for (int i = 0; i < n; ++i) {
      sig.clear();
      signature(i, sig);
      if (!seen[cls[i]]) {
        seen[cls[i]] = 1;
        rep[cls[i]] = sig;
      } else if (rep[cls[i]] != sig) {
        return false;
      }
    }
    return true;
  };
  const bool tasks_ok = check(s.tasks, part.task, part.tasks, [&](int t, std::vector<std::int64_t>& sig) {
    sig = {r.task_schedule[t], r.pending[t], r.phase[t], s.task_size[t], r.flags[t],
           static_cast<std::int64_t>(bits_of(r.task_delay_s[t]))};
    sorted(s.pred, t, part.task, sig);
    sorted(s.succ, t, part.task, sig);
    const std::size_t from = sig.size();
    for (int p = r.part_offset[t]; p < r.part_offset[t + 1]; ++p) sig.push_back(part.part[p]);
    std::sort(sig.begin() + static_cast<std::ptrdiff_t>(from), sig.end());
  });
  const bool parts_ok = check(s.parts, part.part, part.parts, [&](int p, std::vector<std::int64_t>& sig) {
    const int route = r.part_route[p];
    sig = {s.part_size[p], static_cast<std::int64_t>(bits_of(r.route_latency_s[route])),
           r.route_src[route] == r.route_dst[route], r.part_rank[p] >= 0, part.task[s.part_task[p]],
           part.host[s.part_src[p]], part.host[s.part_dst[p]]};
    sorted(s.part_links, p, part.link, sig);
  });
  const bool links_ok = check(s.dlinks, part.link, part.links, [&](int d, std::vector<std::int64_t>& sig) {
    sig = {static_cast<std::int64_t>(bits_of(model.links()[d / 2].bandwidth_Bps))};
    sorted(s.link_parts, d, part.part, sig);
  });
  const bool hosts_ok = check(s.hosts, part.host, part.hosts, [&](int h, std::vector<std::int64_t>& sig) {
    sig = {static_cast<std::int64_t>(bits_of(s.host_speed[h])), s.host_cores[h]};
    sorted(s.host_src_parts, h, part.part, sig);
    sorted(s.host_dst_parts, h, part.part, sig);
  });
  return tasks_ok && parts_ok && links_ok && hosts_ok;
}

}  // namespace racksim::copy_classes
