#include "sim/engine/symmetric_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "sim/core/errors.hpp"

namespace racksim {

namespace {

std::uint64_t pair_key(int a, int b) { return static_cast<std::uint64_t>(a) << 32 | static_cast<std::uint32_t>(b); }
int directed(const LinkUse& u) { return 2 * u.link + (u.up ? 1 : 0); }

bool same_number(double a, double b) { return a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)); }

// The group's images of every listed transfer's route, and the orbits of the links they cross.
struct Images {
  std::string why_not;
  int group = 0;
  std::vector<std::uint64_t> pairs;                 // distinct (src rank, dst rank) of the listed transfers
  std::unordered_map<std::uint64_t, int> pair_of;   // (src rank, dst rank) -> index into pairs
  std::vector<const PlatformRoute*> routes;         // pair * group + element: its image's platform route
  std::unordered_map<int, int> orbit_rep;           // directed link -> its orbit's representative (lowest index)
};

Images images_of(const PlatformModel& model, const Schedule& s, const std::vector<int>& host_of_rank) {
  Images im;
  const ScheduleSymmetry& sym = *s.symmetry;
  const int n = static_cast<int>(host_of_rank.size());
  im.group = static_cast<int>(sym.rank_maps.size());
  if (im.group < 1) {
    im.why_not = "no group elements";
    return im;
  }
  for (const auto& map : sym.rank_maps) {
    if (static_cast<int>(map.size()) != n) {
      im.why_not = "a rank map of " + std::to_string(map.size()) + " ranks for " + std::to_string(n);
      return im;
    }
    std::vector<char> seen(n, 0);
    for (int r : map) {
      if (r < 0 || r >= n || seen[r]) {
        im.why_not = "a rank map that is no permutation";
        return im;
      }
      seen[r] = 1;
    }
  }
  if (sym.full_tasks >= std::numeric_limits<int>::max()) {
    im.why_not = std::to_string(sym.full_tasks) + " tasks in the full schedule, over what the engine numbers";
    return im;
  }
  if (!sym.mean_bytes.empty() && sym.mean_bytes.size() != s.tasks.size()) {
    im.why_not = std::to_string(sym.mean_bytes.size()) + " mean sizes for " + std::to_string(s.tasks.size()) + " listed tasks";
    return im;
  }
  if (static_cast<long>(s.tasks.size()) * im.group != sym.full_tasks) {
    im.why_not = std::to_string(s.tasks.size()) + " listed tasks x " + std::to_string(im.group) + " elements is not " +
                 std::to_string(sym.full_tasks);
    return im;
  }
  for (const Task& t : s.tasks) {
    if (t.src.kind != Endpoint::Kind::rank || t.dsts.size() != 1 || t.dsts[0].kind != Endpoint::Kind::rank) {
      im.why_not = "task " + std::to_string(t.id) + " is not one rank sending to one rank";
      return im;
    }
    const std::uint64_t key = pair_key(t.src.index, t.dsts[0].index);
    if (im.pair_of.emplace(key, static_cast<int>(im.pairs.size())).second) im.pairs.push_back(key);
  }
  // Each element's map of directed links, built from the routes position by position; it must be one map
  // (a link goes to one link, and two links never to the same one) for the group to act on the links.
  std::vector<std::unordered_map<int, int>> image(im.group), preimage(im.group);
  const auto& links = model.links();
  im.routes.resize(im.pairs.size() * static_cast<std::size_t>(im.group));
  for (std::size_t p = 0; p < im.pairs.size(); ++p) {
    const int a = static_cast<int>(im.pairs[p] >> 32), b = static_cast<int>(im.pairs[p] & 0xffffffffu);
    const PlatformRoute& base = model.route(host_of_rank[a], host_of_rank[b]);
    for (int g = 0; g < im.group; ++g) {
      const auto& map = sym.rank_maps[g];
      const PlatformRoute& r = model.route(host_of_rank[map[a]], host_of_rank[map[b]]);
      im.routes[p * im.group + g] = &r;
      const std::string where = model.host(host_of_rank[map[a]]).name + " -> " + model.host(host_of_rank[map[b]]).name;
      if (!r.broken.empty()) {
        im.why_not = where + ": " + r.broken;
        return im;
      }
      if (r.links.size() != base.links.size() || !same_number(r.latency_s, base.latency_s)) {
        im.why_not = where + " is not routed like its orbit's listed transfer";
        return im;
      }
      for (std::size_t i = 0; i < r.links.size(); ++i) {
        const int from = directed(base.links[i]), to = directed(r.links[i]);
        const PlatformLink& x = links[static_cast<std::size_t>(base.links[i].link)];
        const PlatformLink& y = links[static_cast<std::size_t>(r.links[i].link)];
        if (x.link_kind != y.link_kind || x.down != y.down || !same_number(x.bandwidth_Bps, y.bandwidth_Bps) ||
            !same_number(x.latency_s, y.latency_s)) {
          im.why_not = y.name + " on " + where + " differs from " + x.name + " (bandwidth, latency or kind)";
          return im;
        }
        const auto [fwd, new_fwd] = image[g].emplace(from, to);
        const auto [back, new_back] = preimage[g].emplace(to, from);
        if (fwd->second != to || back->second != from) {
          im.why_not = "the permutations do not act on the links (" + x.name + " -> " + y.name + " on " + where + ")";
          return im;
        }
      }
    }
  }
  // Orbits: the links joined by the elements' maps (union-find), each named by its lowest directed index.
  std::unordered_map<int, int> parent;
  const auto find = [&](int d) {
    parent.emplace(d, d);
    int root = d;
    while (parent[root] != root) root = parent[root];
    for (int x = d; parent[x] != root;) {  // path compression
      const int next = parent[x];
      parent[x] = root;
      x = next;
    }
    return root;
  };
  for (const auto& map : image)
    for (const auto& [from, to] : map) {
      const int ra = find(from), rb = find(to);
      if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
    }
  std::unordered_map<int, int> lowest;
  for (const auto& [d, unused] : parent) {
    const int root = find(d);
    auto [it, added] = lowest.emplace(root, d);
    if (!added) it->second = std::min(it->second, d);
  }
  for (const auto& [d, unused] : parent) im.orbit_rep[d] = lowest[find(d)];
  return im;
}

}  // namespace

std::string symmetry_breaks(const PlatformModel& model, const Schedule& schedule) {
  if (!schedule.symmetry) return "";
  std::vector<int> hosts;
  try {
    hosts = hosts_of_ranks(model, schedule);  // as compile_run maps them
  } catch (const std::exception& e) {
    return e.what();  // a GPU outside the topology or taken out: compile_run says so again, for the full schedule
  }
  return images_of(model, schedule, hosts).why_not;
}

CompiledRun compile_symmetric(const PlatformModel& model, const Calibration& calibration, const Schedule& schedule) {
  // The listed tasks compiled as they are: dependencies, payloads, step delays and the identity's routes.
  CompiledRun c = compile_listed(model, calibration, {&schedule});
  const CompiledSchedule& cs0 = c.schedules.front();
  const Images im = images_of(model, schedule, cs0.hosts_of_rank);
  if (!im.why_not.empty())
    throw SimulationError("internal: " + schedule.algorithm + " listed by its symmetry, which the platform breaks: " +
                          im.why_not);
  std::unordered_map<int, int> rank_of_host;
  for (std::size_t r = 0; r < cs0.hosts_of_rank.size(); ++r) rank_of_host.emplace(cs0.hosts_of_rank[r], static_cast<int>(r));

  // Each listed task moves its orbit's mean bytes (Schedule::symmetry), as the refinement's quotient moves its
  // class's mean: its payload scaled alike.
  const std::vector<double>& mean = schedule.symmetry->mean_bytes;
  if (!mean.empty())
    for (int t = 0; t < c.tasks(); ++t) {
      if (c.is_launch(t) || c.task_bytes[t] <= 0) continue;
      const double scale = mean[static_cast<std::size_t>(t)] / c.task_bytes[t];
      c.task_bytes[t] = mean[static_cast<std::size_t>(t)];
      for (int p = c.part_offset[t]; p < c.part_offset[t + 1]; ++p) c.payload[p] *= scale;
    }
  // Bytes each compiled route carries in the listed run (each image carries the same on its own links).
  const int routes = static_cast<int>(c.route_src.size());
  std::vector<double> route_bytes(routes, 0.0);
  for (int t = 0; t < c.tasks(); ++t)
    for (int p = c.part_offset[t]; p < c.part_offset[t + 1]; ++p) route_bytes[c.part_route[p]] += c.task_bytes[t];

  // Each route becomes its orbit's: every image's links, each replaced by its orbit's representative where it is
  // that representative (one use per image crossing it: the orbit's flows on the one link that stands for its
  // orbit). The full run's bytes per link are every image's.
  std::vector<LinkUse> route_links;
  std::vector<int> route_link_offset{0};
  std::vector<double> link_bytes(model.links().size(), 0.0);
  for (int r = 0; r < routes; ++r) {
    const int pair = im.pair_of.at(pair_key(rank_of_host.at(c.route_src[r]), rank_of_host.at(c.route_dst[r])));
    std::vector<std::pair<int, int>> uses;  // (representative directed link, images crossing it), first-seen order
    for (int g = 0; g < im.group; ++g)
      for (const LinkUse& u : im.routes[static_cast<std::size_t>(pair) * im.group + g]->links) {
        link_bytes[static_cast<std::size_t>(u.link)] += route_bytes[r];
        const int d = directed(u);
        if (im.orbit_rep.at(d) != d) continue;
        auto it = std::find_if(uses.begin(), uses.end(), [&](const auto& x) { return x.first == d; });
        if (it == uses.end()) uses.emplace_back(d, 1);
        else ++it->second;
      }
    for (const auto& [d, count] : uses)
      for (int i = 0; i < count; ++i) route_links.push_back({d / 2, (d & 1) != 0});
    route_link_offset.push_back(static_cast<int>(route_links.size()));
  }
  c.route_links = std::move(route_links);
  c.route_link_offset = std::move(route_link_offset);
  CompiledSchedule& cs = c.schedules.front();
  cs.link_bytes.clear();
  for (std::size_t l = 0; l < link_bytes.size(); ++l)
    if (link_bytes[l] > 0) cs.link_bytes.emplace_back(static_cast<int>(l), link_bytes[l]);
  std::vector<char> used(model.links().size(), 0);
  for (const LinkUse& u : c.route_links) used[static_cast<std::size_t>(u.link)] = 1;
  c.links.clear();
  for (std::size_t l = 0; l < used.size(); ++l)
    if (used[l]) c.links.push_back(static_cast<int>(l));

  auto classes = std::make_shared<CompiledRun::Classes>();
  classes->full_tasks = static_cast<int>(schedule.symmetry->full_tasks) + 1;  // and the launch task
  classes->task_class.resize(static_cast<std::size_t>(c.tasks()));
  std::iota(classes->task_class.begin(), classes->task_class.end(), 0);  // results read the listed tasks
  classes->directed_link_rep.assign(2 * model.links().size(), -1);
  for (const auto& [d, rep] : im.orbit_rep) classes->directed_link_rep[static_cast<std::size_t>(d)] = rep;
  c.classes = std::move(classes);
  // Said in the result beside the counts (a quotient found by the refinement says nothing there).
  c.engine_note = schedule.algorithm + " listed by its symmetry: " + std::to_string(im.group) +
                  " permutations of the ranks, one task per orbit";
  return c;
}

}  // namespace racksim
