#include "models/analytic/flow_cost.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "sim/core/hash.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

double StageCost::time(double bytes) const {
  double t = 0;
  for (const auto& [alpha, per_byte] : lines) t = std::max(t, alpha + bytes * per_byte);
  return t;
}

namespace {
// Tables of paths kept per set of terms; a search uses a handful (per algorithm, protocol and channel
// count). Beyond this many, FlowCosters keep their own paths.
constexpr std::size_t kMaxTables = 256;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t x) { return hash_combine(h, x); }

// Fibonacci hashing: spreads link keys (consecutive ids, a kind tag in the top bits) over a table's slots.
std::size_t spread(long long key) {
  const std::uint64_t h = static_cast<std::uint64_t>(key) * 0x9e3779b97f4a7c15ULL;
  return static_cast<std::size_t>(h ^ (h >> 32));
}
}  // namespace

struct FlowCache::Table {
  std::array<std::uint64_t, 18> terms{};
  std::vector<std::unique_ptr<FlowCoster::Path>> paths;  // by raw path id
};

// Dense GPU -> GPU index up to this many GPUs (4 MiB of ids at 1 024 GPUs, 14 racks of 72).
constexpr int kMaxDenseGpus = 1024;

FlowCache::FlowCache(const TopologyGraph& graph) : graph_(graph) {
  gpus_ = graph.gpu_count();
  if (gpus_ > kMaxDenseGpus) return;
  gpu_index_.assign(graph.vertices().size(), -1);
  for (int g = 0; g < gpus_; ++g) gpu_index_[static_cast<std::size_t>(graph.gpu_vertex(g))] = g;
}

int* FlowCache::full_slot(int src, int dst) {
  if (gpu_index_.empty() || src < 0 || dst < 0 || static_cast<std::size_t>(src) >= gpu_index_.size() ||
      static_cast<std::size_t>(dst) >= gpu_index_.size())
    return nullptr;
  const int a = gpu_index_[static_cast<std::size_t>(src)], b = gpu_index_[static_cast<std::size_t>(dst)];
  if (a < 0 || b < 0) return nullptr;
  if (full_dense_.empty()) full_dense_.assign(static_cast<std::size_t>(gpus_) * static_cast<std::size_t>(gpus_), -1);
  return &full_dense_[static_cast<std::size_t>(a) * static_cast<std::size_t>(gpus_) + static_cast<std::size_t>(b)];
}
FlowCache::~FlowCache() = default;


FlowCache* FlowCache::active(const TopologyGraph& graph) {
  FlowCache* c = Scope::active();
  return c != nullptr && &c->graph_ == &graph ? c : nullptr;
}

FlowCache::Table* FlowCache::table(const std::array<std::uint64_t, 18>& terms) {
  for (auto& t : tables_)
    if (t->terms == terms) return t.get();
  if (tables_.size() >= kMaxTables) return nullptr;
  tables_.push_back(std::make_unique<Table>());
  tables_.back()->terms = terms;
  return tables_.back().get();
}

std::size_t FlowCache::VectorHash::operator()(const std::vector<int>& v) const {
  std::size_t h = v.size();
  for (int x : v) h = hash_combine(h, static_cast<std::uint64_t>(static_cast<std::size_t>(x)));
  return h;
}

FlowCoster::FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const std::string& op_slash_algo,
                       double bytes)
    : graph_(graph), calibration_(calibration) {
  const AlgorithmCalibration& a = calibration.algorithm(op_slash_algo);
  algorithm_efficiency_ = a.efficiency_at(bytes);
  if (!(algorithm_efficiency_ > 0)) algorithm_efficiency_ = 1;
  nic_efficiency_ = algorithm_efficiency_;  // no terms: a schedule written by hand, every flow alike
  launch_s_ = units::us_to_s(a.launch_overhead_us);
  step_s_ = units::us_to_s(a.step_overhead_us);
  use_cache();
}

FlowCoster::FlowCoster(const TopologyGraph& graph, const Calibration& calibration, const FlowTerms& terms)
    : graph_(graph), calibration_(calibration), has_terms_(true), terms_(terms) {
  algorithm_efficiency_ = terms.efficiency > 0 ? terms.nvlink_efficiency() : 1;
  nic_efficiency_ = terms.efficiency > 0 ? terms.network_efficiency() : 1;
  launch_s_ = terms.no_latency ? 0 : terms.launch_s;
  step_s_ = 0;
  use_cache();
}

void FlowCoster::use_cache() {
  cache_ = FlowCache::active(graph_);
  if (cache_ == nullptr) return;
  // Everything make_path() reads besides the route: the step latency and terms, and the link calibration
  // of every link kind (compared bit for bit).
  std::array<std::uint64_t, 18> t{};
  t[0] = bits(step_s_);
  t[1] = has_terms_;
  t[2] = terms_.no_latency;
  t[3] = terms_.latency_at_launch;
  t[4] = bits(terms_.intra_step_s);
  t[5] = bits(terms_.net_step_s);
  std::size_t i = 6;
  for (LinkKind k : {LinkKind::nvlink, LinkKind::c2c, LinkKind::pcie, LinkKind::cpu_cpu, LinkKind::nic, LinkKind::ib}) {
    const LinkCalibration& lc = link_calibration(k);
    t[i++] = bits(lc.extra_latency_us);
    t[i++] = bits(lc.bandwidth_efficiency);
  }
  table_ = cache_->table(t);
}

namespace {
// Link keys: a kind tag in the top bits, then the id, then the direction.
constexpr long long kEdge = 0, kPort = 1, kShare = 2, kTrunk = 3;
long long link_key(long long tag, long long id, int direction) { return (tag << 48) | (id << 1) | direction; }
}  // namespace

std::vector<FlowCache::Hop> FlowCoster::raw_hops(const Route& route, std::size_t first_hop, std::size_t end_hop) const {
  std::vector<FlowCache::Hop> out;
  out.reserve(route.hops.size());
  for (std::size_t i = first_hop; i < end_hop && i < route.hops.size(); ++i) {
    const RouteHop& h = route.hops[i];
    long long key;
    if (h.from >= 0 && h.to >= 0 && h.edges.size() == 1) {
      const Edge& e = graph_.edges()[h.edges[0]];
      const int dir = h.from == e.a ? 0 : 1;
      key = e.share_group >= 0 ? link_key(kShare, e.share_group, dir) : link_key(kEdge, h.edges[0], dir);
    } else if (h.from >= 0) {
      key = link_key(kPort, h.from, 0);  // GPU port, towards the switch plane
    } else if (h.to >= 0) {
      key = link_key(kPort, h.to, 1);    // GPU port, from the switch plane
    } else {
      const int dir = graph_.vertices()[route.src].rack < graph_.vertices()[route.dst].rack ? 0 : 1;
      key = link_key(kTrunk, h.edges.empty() ? 0 : h.edges[0], dir);
    }
    out.push_back({key, h.bandwidth_Bps, h.latency_s, h.kind});
  }
  return out;
}

const LinkCalibration& FlowCoster::link_calibration(LinkKind kind) const {
  const auto k = static_cast<std::size_t>(kind);
  if (k >= link_cal_.size()) return calibration_.link(kind, terms_.arch);
  if (link_cal_[k] == nullptr) link_cal_[k] = &calibration_.link(kind, terms_.arch);
  return *link_cal_[k];
}

FlowCoster::Path FlowCoster::make_path(const std::vector<FlowCache::Hop>& hops) const {
  Path p;
  p.alpha_s = step_s_;
  bool crosses_nic = false;
  p.links.reserve(hops.size());
  for (const FlowCache::Hop& h : hops) {
    const LinkCalibration& lc = link_calibration(h.kind);
    crosses_nic = crosses_nic || h.kind == LinkKind::nic;
    p.alpha_s += h.latency_s + units::us_to_s(lc.extra_latency_us);
    p.links.emplace_back(h.key, h.bandwidth_Bps * lc.bandwidth_efficiency);  // x algorithm_efficiency_ when used
  }
  p.crosses_nic = crosses_nic;
  // NCCL's per-step latency is the whole step's latency; the wire's is part of it (never less than the wire).
  if (has_terms_)
    p.alpha_s = terms_.no_latency || terms_.latency_at_launch ? 0 : std::max(p.alpha_s, crosses_nic ? terms_.net_step_s : terms_.intra_step_s);
  return p;
}

const std::vector<FlowCache::Hop>& FlowCoster::raw_path(int which, int a, int b, std::vector<FlowCache::Hop>& own, int* id) {
  auto compute = [&]() {
    if (which == 0) {
      const Route r = find_route(graph_, a, b);
      return raw_hops(r, 0, r.hops.size());
    }
    if (which == 1) return raw_hops(find_route(graph_, a, b), 0, 1);  // a: the GPU, b: its peer
    const Route r = find_route(graph_, b, a);                          // a: the GPU, b: its peer
    return raw_hops(r, r.hops.size() - 1, r.hops.size());
  };
  if (cache_ == nullptr) {
    own = compute();
    return own;
  }
  int* slot = which == 0 ? cache_->full_slot(a, b) : nullptr;
  if (slot != nullptr) {
    if (*slot >= 0) {
      *id = *slot;
      return cache_->raw_[static_cast<std::size_t>(*slot)];
    }
    std::vector<FlowCache::Hop> hops = compute();
    *id = static_cast<int>(cache_->raw_.size());
    cache_->raw_.push_back(std::move(hops));
    *slot = *id;
    return cache_->raw_.back();
  }
  auto& index = which == 0 ? cache_->full_ : which == 1 ? cache_->up_ : cache_->down_;
  const long long k = which == 0 ? (static_cast<long long>(a) << 32) | static_cast<unsigned>(b) : a;
  const auto it = index.find(k);
  if (it != index.end()) {
    *id = it->second;
    return cache_->raw_[static_cast<std::size_t>(it->second)];
  }
  std::vector<FlowCache::Hop> hops = compute();
  *id = static_cast<int>(cache_->raw_.size());
  cache_->raw_.push_back(std::move(hops));
  index.emplace(k, *id);
  return cache_->raw_.back();
}

const FlowCoster::Path& FlowCoster::cached_path(int id, const std::vector<FlowCache::Hop>& hops) const {
  auto& paths = table_->paths;
  if (paths.size() <= static_cast<std::size_t>(id)) paths.resize(cache_->raw_.size());
  auto& slot = paths[static_cast<std::size_t>(id)];
  if (!slot) {
    slot = std::make_unique<Path>(make_path(hops));
    slot->raw = id;
  }
  return *slot;
}

const FlowCoster::Path& FlowCoster::gpu_to_gpu(int src, int dst) {
  if (table_ != nullptr) {
    if (const int* slot = cache_->full_slot(src, dst)) {
      if (*slot >= 0) return cached_path(*slot, cache_->raw_[static_cast<std::size_t>(*slot)]);
    } else {
      const auto it = cache_->full_.find((static_cast<long long>(src) << 32) | static_cast<unsigned>(dst));
      if (it != cache_->full_.end()) return cached_path(it->second, cache_->raw_[static_cast<std::size_t>(it->second)]);
    }
  }
  const auto it = paths_.find({src, dst});
  if (it != paths_.end()) return it->second;
  std::vector<FlowCache::Hop> own;
  int id = -1;
  const std::vector<FlowCache::Hop>& hops = raw_path(0, src, dst, own, &id);
  if (table_ != nullptr) return cached_path(id, hops);
  Path p = make_path(hops);
  p.raw = id;
  return paths_.emplace(std::make_pair(src, dst), std::move(p)).first->second;
}

int FlowCoster::domain_peer(int gpu_vertex) const {
  const int domain = graph_.vertices()[gpu_vertex].domain;
  if (domain < 0)
    throw InputError("--algo", "", graph_.vertices()[gpu_vertex].name + " outside any NVLink domain",
                     "GPUs of an NVLink domain for switch-plane (NVLS) transfers");
  // Two GPUs of the domain, so that every GPU has a peer other than itself.
  auto& first = peer_of_domain_[0];
  auto& second = peer_of_domain_[1];
  if (!first.count(domain)) {
    for (int g = 0; g < graph_.gpu_count(); ++g) {
      const int v = graph_.gpu_vertex(g);
      if (graph_.vertices()[v].domain != domain) continue;
      if (!first.count(domain)) {
        first[domain] = v;
      } else {
        second[domain] = v;
        break;
      }
    }
  }
  if (first[domain] != gpu_vertex) return first[domain];
  const auto it = second.find(domain);
  return it == second.end() ? -1 : it->second;
}

const FlowCoster::Path& FlowCoster::gpu_to_switch(int gpu) { return plane_path(gpu, 1); }

const FlowCoster::Path& FlowCoster::switch_to_gpu(int gpu) { return plane_path(gpu, 2); }

// A GPU's path to (which 1) or from (which 2) its domain's switch plane, by way of a peer's route.
const FlowCoster::Path& FlowCoster::plane_path(int gpu, int which) {
  if (table_ != nullptr) {  // cached only for GPUs with a peer (domain_peer() succeeded then)
    const auto& cached = which == 1 ? cache_->up_ : cache_->down_;
    const auto c = cached.find(gpu);
    if (c != cached.end()) return cached_path(c->second, cache_->raw_[static_cast<std::size_t>(c->second)]);
  }
  std::map<int, Path>& mine = which == 1 ? up_ : down_;
  const auto it = mine.find(gpu);
  if (it != mine.end()) return it->second;
  const int peer = domain_peer(gpu);
  Path p;
  if (peer >= 0) {
    std::vector<FlowCache::Hop> own;
    int id = -1;
    const std::vector<FlowCache::Hop>& hops = raw_path(which, gpu, peer, own, &id);
    if (table_ != nullptr) return cached_path(id, hops);
    p = make_path(hops);
    p.raw = id;
  }
  return mine.emplace(gpu, std::move(p)).first->second;
}

const FlowCoster::Path& FlowCoster::gpu_to_fabric(int gpu) { return fabric_path(gpu, true); }

const FlowCoster::Path& FlowCoster::fabric_to_gpu(int gpu) { return fabric_path(gpu, false); }

// A GPU's route to (up) or from its rail's spine switch, where racksim's fabric plane sits (sim/platform).
const FlowCoster::Path& FlowCoster::fabric_path(int gpu, bool up) {
  std::map<int, Path>& mine = up ? fabric_up_ : fabric_down_;
  const auto it = mine.find(gpu);
  if (it != mine.end()) return it->second;
  const int nic = graph_.nic_of_gpu(gpu);
  const int spine = nic >= 0 ? graph_.spine_of_rail(graph_.vertices()[nic].local) : -1;
  if (spine < 0)
    throw InputError("--algo", "", graph_.vertices()[gpu].name + (nic < 0 ? " has no NIC of its own" : " has no scale-out fabric"),
                     "GPUs with their own NIC on an InfiniBand fabric for CollNet (SHARP) transfers");
  const Route r = up ? find_route(graph_, gpu, spine) : find_route(graph_, spine, gpu);
  Path p = make_path(raw_hops(r, 0, r.hops.size()));
  return mine.emplace(gpu, std::move(p)).first->second;
}

double FlowCoster::fabric_reduce_s_per_byte(int rail) {
  double sum = 0;
  const LinkCalibration& lc = link_calibration(LinkKind::nic);
  for (const Edge& e : graph_.edges()) {
    if (e.kind != LinkKind::nic) continue;
    const Vertex &a = graph_.vertices()[e.a], &b = graph_.vertices()[e.b];
    const Vertex& leaf = a.kind == VertexKind::ib_switch ? a : b;
    if (leaf.kind == VertexKind::ib_switch && leaf.local == rail) sum += e.bandwidth_Bps * lc.bandwidth_efficiency * nic_efficiency_;
  }
  return sum > 0 ? 1 / sum : 0;
}

double FlowCoster::plane_reduce_s_per_byte(int domain) {
  double sum = 0;
  for (int g = 0; g < graph_.gpu_count(); ++g) {
    const int v = graph_.gpu_vertex(g);
    if (graph_.vertices()[v].domain != domain) continue;
    const Path& up = gpu_to_switch(v);
    if (!up.links.empty()) sum += up.links.front().second * algorithm_efficiency_;
  }
  return sum > 0 ? 1 / sum : 0;
}

namespace {
// One line of a stage: the flow's alpha and its seconds per byte, the most of (flows on a link / the
// link's capacity at the algorithm's efficiency) over its links.
template <class Links, class Load>
std::pair<double, double> flow_line(double alpha_s, const Links& links, double efficiency, Load load) {
  double per_byte = 0;
  for (const auto& link : links) {
    const double cap = link.second * efficiency;
    per_byte = std::max(per_byte, cap > 0 ? load(link) / cap : std::numeric_limits<double>::infinity());
  }
  return {alpha_s, per_byte};
}

// The number of flows on each link of each flow, in order, for flows given by `each`, which calls its
// argument with every link key of every flow, in order (`total` of them): link keys counted in an
// open-addressing table (sorting every key and counting by binary search was ~3 % of an 8-rack search,
// whose all-to-alls have 5 112 flows of a few links each). The table is the caller's and is left empty
// for the next set: only the slots used are reset, so a set does not allocate and zero a table of its own.
template <class EachKey>
std::vector<double> link_loads(std::size_t total, FlowCache::KeyCounter& counter, const EachKey& each) {
  constexpr long long kEmpty = -1;  // link keys are >= 0 (link_key)
  std::size_t slots = 16;
  while (slots < 2 * total) slots *= 2;  // at most half full: short probe sequences
  if (counter.slots.size() < slots) counter.slots.assign(slots, {kEmpty, 0});
  const std::size_t mask = counter.slots.size() - 1;  // a power of two
  auto slot_of = [&](long long key) -> std::size_t {
    std::size_t i = spread(key) & mask;
    while (counter.slots[i].first != kEmpty && counter.slots[i].first != key) i = (i + 1) & mask;
    return i;
  };
  each([&](long long key) {
    const std::size_t i = slot_of(key);
    if (counter.slots[i].first == kEmpty) {
      counter.slots[i].first = key;
      counter.used.push_back(i);
    }
    ++counter.slots[i].second;
  });
  std::vector<double> loads;
  loads.reserve(total);
  each([&](long long key) { loads.push_back(static_cast<double>(counter.slots[slot_of(key)].second)); });
  for (std::size_t i : counter.used) counter.slots[i] = {kEmpty, 0};
  counter.used.clear();
  return loads;
}

std::vector<double> link_loads(const std::vector<const FlowCoster::Path*>& flows, FlowCache::KeyCounter& counter) {
  std::size_t total = 0;
  for (const FlowCoster::Path* f : flows) total += f->links.size();
  return link_loads(total, counter, [&](const auto& count) {
    for (const FlowCoster::Path* f : flows)
      for (const auto& link : f->links) count(link.first);
  });
}

StageCost sorted_lines(std::vector<std::pair<double, double>> lines) {
  StageCost c;
  c.lines = std::move(lines);
  std::sort(c.lines.begin(), c.lines.end());
  c.lines.erase(std::unique(c.lines.begin(), c.lines.end()), c.lines.end());
  return c;
}
}  // namespace

std::vector<FlowCache::RawClass> FlowCoster::raw_classes_of(const std::vector<int>& raw_ids,
                                                            const std::vector<double>& loads) const {
  std::vector<FlowCache::RawClass> classes;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;  // a class's hash -> its positions
  // Whether raw path `raw` with flow counts from `first` is in class `c`, bit for bit.
  auto same_class = [&](const FlowCache::RawClass& c, int raw, std::size_t first) {
    const auto &a = cache_->raw_[static_cast<std::size_t>(c.raw)], &b = cache_->raw_[static_cast<std::size_t>(raw)];
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (bits(a[k].bandwidth_Bps) != bits(b[k].bandwidth_Bps) || bits(a[k].latency_s) != bits(b[k].latency_s) ||
          a[k].kind != b[k].kind || bits(c.loads[k]) != bits(loads[first + k]))
        return false;
    return true;
  };
  std::size_t first = 0;
  for (int raw : raw_ids) {
    const auto& hops = cache_->raw_[static_cast<std::size_t>(raw)];
    std::uint64_t h = hops.size();
    for (std::size_t k = 0; k < hops.size(); ++k)
      h = mix(mix(mix(mix(h, bits(hops[k].bandwidth_Bps)), bits(hops[k].latency_s)), static_cast<std::uint64_t>(hops[k].kind)),
              bits(loads[first + k]));
    std::vector<std::size_t>& same_hash = by_hash[h];
    bool known = false;
    for (std::size_t c : same_hash) known = known || same_class(classes[c], raw, first);
    if (!known) {
      same_hash.push_back(classes.size());
      const auto from = loads.begin() + static_cast<std::ptrdiff_t>(first);
      classes.push_back({raw, std::vector<double>(from, from + static_cast<std::ptrdiff_t>(hops.size()))});
    }
    first += hops.size();  // a path has one link per hop (make_path)
  }
  return classes;
}

const std::vector<FlowCache::FlowClass>& FlowCoster::classes_of(FlowCache::FlowSet& set) const {
  for (const auto& [table, classes] : set.classes)
    if (table == table_) return classes;
  std::vector<FlowCache::FlowClass> classes;
  classes.reserve(set.raw_classes.size());
  for (const FlowCache::RawClass& rc : set.raw_classes) {
    const Path& p = cached_path(rc.raw, cache_->raw_[static_cast<std::size_t>(rc.raw)]);
    FlowCache::FlowClass c;
    c.alpha_s = p.alpha_s;
    c.crosses_nic = p.crosses_nic;
    for (std::size_t k = 0; k < p.links.size(); ++k) c.links.emplace_back(rc.loads[k], p.links[k].second);
    classes.push_back(std::move(c));
  }
  set.classes.emplace_back(table_, std::move(classes));
  return set.classes.back().second;
}

StageCost FlowCoster::all_to_all_stage(const std::vector<int>& vertices) {
  const std::size_t n = vertices.size();
  if (table_ == nullptr) {  // no cache (or no table of paths left): flow by flow
    std::vector<const Path*> flows;
    flows.reserve(n * (n > 0 ? n - 1 : 0));
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t d = 0; d < n; ++d)
        if (s != d) flows.push_back(&gpu_to_gpu(vertices[s], vertices[d]));
    return stage(flows);
  }
  auto it = cache_->all_to_all_.find(vertices);
  if (it == cache_->all_to_all_.end()) {
    // The set's classes from the flows' routes alone (raw path ids): no path is built for a flow until its
    // class needs one, and neither the ids nor the loads are kept. Same classes as stage() finds, so the
    // same lines to the bit.
    std::vector<int>& ids = cache_->scratch_;  // the flows' raw path ids, as stage() keeps them
    ids.clear();
    ids.reserve(n * (n > 0 ? n - 1 : 0));
    std::size_t total = 0;
    std::vector<FlowCache::Hop> own;
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t d = 0; d < n; ++d) {
        if (s == d) continue;
        int id = -1;
        total += raw_path(0, vertices[s], vertices[d], own, &id).size();
        ids.push_back(id);
      }
    const std::vector<double> loads = link_loads(total, cache_->counter_, [&](const auto& count) {
      for (int id : ids)
        for (const FlowCache::Hop& h : cache_->raw_[static_cast<std::size_t>(id)]) count(h.key);
    });
    FlowCache::FlowSet set;
    set.raw_classes = raw_classes_of(ids, loads);
    it = cache_->all_to_all_.emplace(vertices, std::move(set)).first;
  }
  return lines_of(classes_of(it->second), algorithm_efficiency_, nic_efficiency_);
}

StageCost FlowCoster::stage(const std::vector<const Path*>& flows) const {
  // Flows per link, in the order of the flows' links (link_loads): with a cache, once per flow set (its raw
  // path ids); without one, for every call.
  FlowCache::FlowSet* set = nullptr;
  std::vector<int>* ids = nullptr;
  if (cache_ != nullptr) {
    ids = &cache_->scratch_;
    ids->clear();
    for (const Path* f : flows) {
      if (f->raw < 0) {
        ids = nullptr;
        break;
      }
      ids->push_back(f->raw);
    }
    if (ids != nullptr) {
      const auto it = cache_->loads_.find(*ids);
      if (it != cache_->loads_.end()) set = &it->second;
    }
  }
  FlowCache::FlowSet own;
  if (set == nullptr) {
    FlowCache::KeyCounter mine;
    own.loads = link_loads(flows, cache_ != nullptr ? cache_->counter_ : mine);
    if (ids != nullptr) own.raw_classes = raw_classes_of(*ids, own.loads);
    set = ids != nullptr ? &cache_->loads_.emplace(*ids, std::move(own)).first->second : &own;
  }
  // Every path is its table's (bit-identical for the same raw id): one line per class gives the same
  // distinct lines as one per flow.
  if (table_ != nullptr && ids != nullptr) return lines_of(classes_of(*set), algorithm_efficiency_, nic_efficiency_);
  std::vector<std::pair<double, double>> lines;
  lines.reserve(flows.size());
  std::size_t i = 0;
  for (const Path* f : flows)
    lines.push_back(flow_line(f->alpha_s, f->links, f->crosses_nic ? nic_efficiency_ : algorithm_efficiency_,
                              [&](const auto&) { return set->loads[i++]; }));
  return sorted_lines(std::move(lines));
}

StageCost FlowCoster::lines_of(const std::vector<FlowCache::FlowClass>& classes, double efficiency,
                               double nic_efficiency) {
  std::vector<std::pair<double, double>> lines;
  lines.reserve(classes.size());
  for (const FlowCache::FlowClass& c : classes)
    lines.push_back(flow_line(c.alpha_s, c.links, c.crosses_nic ? nic_efficiency : efficiency,
                              [](const auto& link) { return link.first; }));
  return sorted_lines(std::move(lines));
}

}  // namespace racksim
