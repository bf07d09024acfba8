#include "sim/engine/compiled_run.hpp"

#include <algorithm>
#include <unordered_map>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/symmetric_run.hpp"

namespace racksim {

namespace {

// Messages are built only on failure: this runs for every task of every run.
void validate(const PlatformModel& model, const Schedule& s, int ranks) {
  auto fail = [&](std::size_t i, const std::string& key, const std::string& value, const std::string& allowed) {
    throw InputError("schedule " + s.algorithm, "/tasks/" + std::to_string(i) + key, value, allowed);
  };
  if (ranks < 1) throw InputError("schedule " + s.algorithm, "/request/gpus", "[]", "at least one rank");
  const int phases = static_cast<int>(s.phases.size());
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    const Task& t = s.tasks[i];
    if (t.id != static_cast<int>(i)) fail(i, "/id", std::to_string(t.id), std::to_string(i));
    if (t.dsts.empty()) fail(i, "/dsts", "[]", "at least one destination");
    for (int d : t.deps)
      if (d < 0 || d >= t.id) fail(i, "/deps", std::to_string(d), "earlier task ids");
    if (t.phase < 0 || t.phase >= phases)
      fail(i, "/phase", std::to_string(t.phase), "an index into phases [0, " + std::to_string(phases) + ")");
    auto check = [&](const Endpoint& e) {
      if (e.kind == Endpoint::Kind::rank && (e.index < 0 || e.index >= ranks))
        fail(i, "", "rank " + std::to_string(e.index), "ranks in [0, " + std::to_string(ranks) + ")");
      if (e.kind == Endpoint::Kind::switch_plane && model.switch_plane_host(e.index) < 0)
        fail(i, "", "switch plane " + std::to_string(e.index),
             "an NVLink domain with a switch plane on " + model.graph().spec().id);
      if (e.kind == Endpoint::Kind::fabric_plane && model.fabric_plane_host(e.index) < 0)
        fail(i, "", "fabric plane " + std::to_string(e.index),
             "a NIC rail of a scale-out fabric on " + model.graph().spec().id);
    };
    check(t.src);
    for (const auto& d : t.dsts) check(d);
  }
}

}  // namespace

std::vector<int> hosts_of_ranks(const PlatformModel& model, const Schedule& s) {
  const TopologyGraph& g = model.graph();
  std::vector<int> hosts;
  for (int gpu : s.request.gpus) {
    if (gpu < 0 || gpu >= g.gpu_count())
      throw InputError("schedule " + s.algorithm, "/request/gpus", std::to_string(gpu),
                       "GPU indices in [0, " + std::to_string(g.gpu_count() - 1) + "]");
    if (!model.gpu_failure(gpu).empty())
      throw SimulationError("GPU " + std::to_string(gpu) + " (" + g.vertices()[g.gpu_vertex(gpu)].name +
                            ") cannot take part: " + model.gpu_failure(gpu));
    hosts.push_back(model.gpu_host(gpu));
  }
  return hosts;
}

CompiledRun compile_run(const PlatformModel& model, const Calibration& calibration,
                        const std::vector<const Schedule*>& schedules,
                        const std::vector<std::vector<int>>* rank_hosts, const std::vector<std::vector<int>>* after) {
  for (const Schedule* s : schedules)
    if (s->symmetry) {
      if (schedules.size() != 1 || rank_hosts != nullptr || after != nullptr)
        throw SimulationError("internal: a schedule listed by its symmetry (" + s->algorithm + ") runs alone");
      return compile_symmetric(model, calibration, *s);
    }
  return compile_listed(model, calibration, schedules, rank_hosts, after);
}

CompiledRun compile_listed(const PlatformModel& model, const Calibration& calibration,
                           const std::vector<const Schedule*>& schedules,
                           const std::vector<std::vector<int>>* rank_hosts, const std::vector<std::vector<int>>* after) {
  if (after != nullptr && after->size() != schedules.size())
    throw InputError("schedules", "", std::to_string(after->size()) + " start dependencies",
                     "one list per schedule (" + std::to_string(schedules.size()) + ")");
  CompiledRun c;
  int total = 0;
  for (const Schedule* s : schedules) total += static_cast<int>(s->tasks.size()) + 1;
  c.task_schedule.resize(total);
  c.pending.assign(total, 0);
  c.phase.assign(total, -1);
  c.task_bytes.assign(total, 0);
  c.task_delay_s.assign(total, 0.0);
  c.flags.assign(total, 0);
  c.part_offset.reserve(total + 1);
  c.part_offset.push_back(0);
  std::vector<int> succ_count(total, 0);
  std::unordered_map<std::uint64_t, int> route_index;
  // Each compiled route's platform route, looked up once: a part reads it from here, not from the model's
  // locked memo again (7.8 M parts at 1 389 racks).
  std::vector<const PlatformRoute*> route_of;
  std::vector<char> route_crosses_nic;  // per compiled route: a NIC on it (CompiledSchedule::nic_efficiency)
  std::vector<char> host_used(0), link_used(model.links().size(), 0);
  std::vector<double> link_bytes(model.links().size(), 0.0);
  // zero_latency: a pipelined NCCL algorithm whose whole latency NCCL's model charges at launch
  // (ExecParams::latency_at_launch), so its transfers wait no route latency of their own.
  auto use_route = [&](int src, int dst, bool zero_latency) {
    const std::uint64_t key = ((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst)) ^
                              (zero_latency ? (1ull << 63) : 0ull);
    auto [it, added] = route_index.emplace(key, static_cast<int>(c.route_src.size()));
    if (added) {
      const PlatformRoute& r = model.route(src, dst);
      route_of.push_back(&r);
      bool nic = false;
      for (const auto& l : r.links) nic = nic || model.links()[static_cast<std::size_t>(l.link)].link_kind == LinkKind::nic;
      route_crosses_nic.push_back(nic);
      c.route_src.push_back(src);
      c.route_dst.push_back(dst);
      c.route_links.insert(c.route_links.end(), r.links.begin(), r.links.end());
      c.route_link_offset.push_back(static_cast<int>(c.route_links.size()));
      c.route_latency_s.push_back(zero_latency ? 0.0 : r.latency_s);
    }
    return it->second;
  };
  c.route_link_offset.push_back(0);

  int next = 0;
  for (std::size_t si = 0; si < schedules.size(); ++si) {
    const Schedule& s = *schedules[si];
    CompiledSchedule cs;
    cs.schedule = &s;
    cs.hosts_of_rank = rank_hosts != nullptr && !(*rank_hosts)[si].empty() ? (*rank_hosts)[si] : hosts_of_ranks(model, s);
    validate(model, s, static_cast<int>(cs.hosts_of_rank.size()));
    const AlgorithmCalibration& cal = calibration.algorithm(s.algorithm);
    cs.first = next;
    cs.count = static_cast<int>(s.tasks.size());
    cs.efficiency = cal.efficiency_at(static_cast<double>(s.request.bytes));
    cs.nic_efficiency = cs.efficiency;
    cs.step_delay_s = units::us_to_s(cal.step_overhead_us);
    cs.launch_delay_s = units::us_to_s(cal.launch_overhead_us);
    if (s.exec.set) {  // the algorithm's NCCL terms (exec_terms.hpp): the same numbers as its closed form
      cs.efficiency = s.exec.efficiency > 0 ? s.exec.efficiency : 1;
      cs.nic_efficiency = s.exec.nic_efficiency > 0 ? s.exec.nic_efficiency : cs.efficiency;
      cs.step_delay_s = 0;
      cs.launch_delay_s = s.exec.launch_s;
    }
    auto host_of = [&](const Endpoint& e) {
      if (e.kind == Endpoint::Kind::fabric_plane) return model.fabric_plane_host(e.index);
      return e.kind == Endpoint::Kind::rank ? cs.hosts_of_rank[e.index] : model.switch_plane_host(e.index);
    };
    std::fill(link_bytes.begin(), link_bytes.end(), 0.0);
    for (const Task& t : s.tasks) {
      const int task = next + t.id;
      c.task_schedule[task] = static_cast<int>(si);
      c.pending[task] = t.deps.empty() ? 1 : static_cast<int>(t.deps.size());  // roots wait for the launch task
      c.phase[task] = t.phase;
      c.task_bytes[task] = static_cast<double>(t.bytes);
      if (t.reduce) c.flags[task] |= CompiledRun::kReduce;
      const int src = host_of(t.src);
      if (t.src.is_plane()) {
        for (int d : t.deps) {  // the plane reduces what reducing transfers brought into it
          const Task& dep = s.tasks[d];
          if (dep.reduce && std::find(dep.dsts.begin(), dep.dsts.end(), t.src) != dep.dsts.end())
            c.flags[task] |= CompiledRun::kSwitchReduce;
        }
      }
      std::vector<int> dsts;
      dsts.reserve(t.dsts.size());
      for (const auto& d : t.dsts) dsts.push_back(host_of(d));
      const bool multicast = t.src.is_plane() && dsts.size() > 1;
      const int parts = multicast ? 1 : static_cast<int>(dsts.size());
      for (int k = 0; k < parts; ++k) {
        const int dst = multicast ? model.multicast_group(dsts) : dsts[k];
        const int r = use_route(src, dst, s.exec.set && s.exec.latency_at_launch);
        const PlatformRoute& route = *route_of[static_cast<std::size_t>(r)];
        if (!route.broken.empty())
          throw SimulationError(s.algorithm + " task " + std::to_string(t.id) + " (" + model.host(src).name + " -> " +
                                model.host(dst).name + ") cannot run: " + route.broken);
        c.part_route.push_back(r);
        c.part_rank.push_back(!multicast && t.dsts[k].kind == Endpoint::Kind::rank ? t.dsts[k].index : -1);
        c.payload.push_back(static_cast<double>(t.bytes) / (route_crosses_nic[static_cast<std::size_t>(r)] ? cs.nic_efficiency : cs.efficiency));
        for (int i = c.route_link_offset[r]; i < c.route_link_offset[r + 1]; ++i) {
          link_bytes[c.route_links[i].link] += static_cast<double>(t.bytes);
          link_used[c.route_links[i].link] = 1;
        }
      }
      c.part_offset.push_back(static_cast<int>(c.part_route.size()));
      c.task_delay_s[task] = cs.step_delay_s;
      if (s.exec.set && !s.exec.latency_at_launch && c.part_offset[task + 1] > c.part_offset[task]) {
        // NCCL's step latency by hop type, never less than the wire's: only what exceeds the route's latency waits here.
        const int r = c.part_route[c.part_offset[task]];
        bool net = false;
        for (int i = c.route_link_offset[r]; i < c.route_link_offset[r + 1] && !net; ++i)
          net = model.links()[c.route_links[i].link].link_kind == LinkKind::nic;
        c.task_delay_s[task] = std::max(0.0, (net ? s.exec.net_step_s : s.exec.intra_step_s) - c.route_latency_s[r]);
      }
      for (int d : t.deps) ++succ_count[next + d];
      if (t.deps.empty()) ++succ_count[next + cs.count];
    }
    c.task_schedule[next + cs.count] = static_cast<int>(si);  // the launch task: no transfer
    c.part_offset.push_back(static_cast<int>(c.part_route.size()));
    for (std::size_t l = 0; l < link_bytes.size(); ++l)
      if (link_bytes[l] > 0) cs.link_bytes.emplace_back(static_cast<int>(l), link_bytes[l]);
    next += cs.count + 1;
    c.schedules.push_back(std::move(cs));
  }
  // Start dependencies: every task of an awaited schedule (its launch task included) precedes this one's
  // launch task.
  for (std::size_t si = 0; after != nullptr && si < schedules.size(); ++si)
    for (int prev : (*after)[si]) {
      if (prev < 0 || prev >= static_cast<int>(si))
        throw InputError("schedules", "", "schedule " + std::to_string(si) + " after " + std::to_string(prev),
                         "earlier schedules only");
      const CompiledSchedule& p = c.schedules[prev];
      c.pending[c.schedules[si].first + c.schedules[si].count] += p.count + 1;
      for (int t = p.first; t <= p.first + p.count; ++t) ++succ_count[t];
    }
  c.succ_offset.assign(total + 1, 0);
  for (int t = 0; t < total; ++t) c.succ_offset[t + 1] = c.succ_offset[t] + succ_count[t];
  c.succ.assign(c.succ_offset[total], 0);
  std::vector<int> fill(c.succ_offset.begin(), c.succ_offset.end() - 1);
  for (std::size_t si = 0; si < schedules.size(); ++si) {
    const CompiledSchedule& cs = c.schedules[si];
    for (const Task& t : schedules[si]->tasks) {
      for (int d : t.deps) c.succ[fill[cs.first + d]++] = cs.first + t.id;
      if (t.deps.empty()) c.succ[fill[cs.first + cs.count]++] = cs.first + t.id;
    }
  }
  for (std::size_t si = 0; after != nullptr && si < schedules.size(); ++si)
    for (int prev : (*after)[si]) {
      const CompiledSchedule& p = c.schedules[prev];
      for (int t = p.first; t <= p.first + p.count; ++t) c.succ[fill[t]++] = c.schedules[si].first + c.schedules[si].count;
    }
  for (double latency : c.route_latency_s) c.latency_in_routes = c.latency_in_routes && latency == c.route_latency_s.front();
  host_used.assign(model.host_count(), 0);
  for (std::size_t r = 0; r < c.route_src.size(); ++r) host_used[c.route_src[r]] = host_used[c.route_dst[r]] = 1;
  for (std::size_t h = 0; h < host_used.size(); ++h)
    if (host_used[h]) {
      c.hosts.push_back(static_cast<int>(h));
      c.host_info.push_back(model.host(static_cast<int>(h)));
    }
  for (std::size_t l = 0; l < link_used.size(); ++l)
    if (link_used[l]) c.links.push_back(static_cast<int>(l));
  return c;
}

std::size_t CompiledRun::memory_bytes() const {
  const auto held = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t n = sizeof(*this) + held(task_schedule) + held(pending) + held(succ_offset) + held(succ) + held(part_offset) +
                  held(part_route) + held(part_rank) + held(payload) + held(task_bytes) + held(flags) + held(phase) +
                  held(task_delay_s) + held(route_src) + held(route_dst) + held(route_link_offset) + held(route_links) +
                  held(route_latency_s) + held(hosts) + held(links) + held(host_info) + held(route_comm_src) +
                  held(route_comm_dst) + held(route_exec_src) + held(route_exec_dst) + held(schedules);
  for (const CompiledSchedule& cs : schedules) n += held(cs.hosts_of_rank) + held(cs.link_bytes);
  for (const PlatformHost& h : host_info) n += h.name.capacity();
  if (classes) n += held(classes->task_class) + held(classes->directed_link_rep);
  return n;
}

}  // namespace racksim
