#include "sim/engine/aggregation.hpp"
#include "sim/engine/copy_classes.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace racksim {

using copy_classes::bits_of;
using copy_classes::build_csr;
using copy_classes::Csr;
using copy_classes::depths;
using copy_classes::Partition;
using copy_classes::Structure;

namespace {

std::vector<int> representatives(const std::vector<int>& cls, int classes) {
  std::vector<int> rep(classes, -1);
  for (std::size_t i = 0; i < cls.size(); ++i)
    if (rep[cls[i]] < 0) rep[cls[i]] = static_cast<int>(i);
  return rep;
}

// Executions (in-switch reductions, GPU reduction kernels) share their host's speed equally. In the
// quotient they run on the representative host of their host's class; when every class of executions
// there has c members per host, the host at 1/c of its speed gives each the share it has among the
// copies. Hosts where classes have different multiplicities: no quotient (the reason is returned).
std::string exec_hosts(const Structure& s, const CompiledRun& full, const Partition& part, bool gpu_reduce,
                       std::vector<int>& host_copies) {
  const std::vector<int> rep_host = representatives(part.host, part.hosts);
  std::vector<std::vector<int>> count_by_class(part.hosts);  // per host class: members per exec class on its rep
  std::map<std::pair<int, int>, int> count;                  // (exec class, host) -> members there
  auto add = [&](std::int64_t exec_class, int host) {
    if (host == rep_host[part.host[host]]) ++count[{static_cast<int>(exec_class), host}];
  };
  for (int t = 0; t < s.tasks; ++t)
    if ((full.flags[t] & CompiledRun::kSwitchReduce) && full.task_bytes[t] > 0 && full.part_offset[t + 1] > full.part_offset[t])
      add(part.task[t], s.part_src[full.part_offset[t]]);
  if (gpu_reduce)
    for (int p = 0; p < s.parts; ++p)
      if ((full.flags[s.part_task[p]] & CompiledRun::kReduce) && full.part_rank[p] >= 0) add(part.tasks + part.part[p], s.part_dst[p]);
  host_copies.assign(s.hosts, 1);
  std::vector<char> seen(s.hosts, 0);
  for (const auto& [key, n] : count) {
    const int host = key.second;
    if (seen[host] && host_copies[host] != n)
      return "executions on " + full.host_info[host].name + " come in different multiplicities";
    seen[host] = 1;
    host_copies[host] = n;
  }
  return "";
}

CompiledRun build_quotient(const Structure& s, const CompiledRun& full, const Partition& part,
                           const std::vector<int>& host_copies) {
  const std::vector<int> rep_task = representatives(part.task, part.tasks);
  const std::vector<int> rep_part = representatives(part.part, part.parts);
  const std::vector<int> rep_link = representatives(part.link, part.links);
  const std::vector<int> rep_host = representatives(part.host, part.hosts);
  // Sizes of a class: its mean (members differ by a rounded byte or so, size_groups).
  std::vector<double> task_bytes(part.tasks, 0.0), payload(part.parts, 0.0);
  std::vector<int> task_members(part.tasks, 0), part_members(part.parts, 0);
  for (int t = 0; t < s.tasks; ++t) {
    task_bytes[part.task[t]] += full.task_bytes[t];
    ++task_members[part.task[t]];
  }
  for (int p = 0; p < s.parts; ++p) {
    payload[part.part[p]] += full.payload[p];
    ++part_members[part.part[p]];
  }
  for (int c = 0; c < part.tasks; ++c) task_bytes[c] /= task_members[c];
  for (int c = 0; c < part.parts; ++c) payload[c] /= part_members[c];
  CompiledRun q;
  q.schedules = full.schedules;  // full numbering, per-link bytes of the full run
  auto classes = std::make_shared<CompiledRun::Classes>();
  classes->full_tasks = s.tasks;
  classes->task_class = part.task;
  classes->directed_link_rep.assign(s.dlinks, -1);
  for (int d = 0; d < s.dlinks; ++d)
    if (s.link_parts.end(d) > s.link_parts.begin(d)) classes->directed_link_rep[d] = rep_link[part.link[d]];
  q.classes = classes;

  // Routes of part classes: the representative link of each link class the class crosses, listed once
  // per member of the class that crosses that representative (its weight on the link).
  std::map<std::vector<std::int64_t>, int> route_index;
  std::map<std::pair<int, int>, int> pair_uses;
  int next_alias = 0;
  for (int h : full.hosts) next_alias = std::max(next_alias, h + 1);
  std::vector<int> route_of_class(part.parts, -1);
  // Members of each part class on each representative link, counted in one pass over those links (looking
  // them up per class and link scanned a link's parts once per class crossing it: 0.8 s of a 3-rack ring).
  std::unordered_map<std::uint64_t, int> on_rep_link;  // (directed link << 32 | part class) -> members there
  for (int lc = 0; lc < part.links; ++lc) {
    const int d = rep_link[lc];
    for (int k = s.link_parts.begin(d); k < s.link_parts.end(d); ++k)
      ++on_rep_link[static_cast<std::uint64_t>(d) << 32 | static_cast<std::uint32_t>(part.part[s.link_parts.items[k]])];
  }
  auto route_for = [&](int cls) {
    if (route_of_class[cls] >= 0) return route_of_class[cls];
    const int p = rep_part[cls], route = full.part_route[p];
    std::vector<int> link_classes;
    for (int k = s.part_links.begin(p); k < s.part_links.end(p); ++k)
      if (std::find(link_classes.begin(), link_classes.end(), part.link[s.part_links.items[k]]) == link_classes.end())
        link_classes.push_back(part.link[s.part_links.items[k]]);
    std::vector<LinkUse> links;
    for (int lc : link_classes) {
      const int d = rep_link[lc];
      const auto at = on_rep_link.find(static_cast<std::uint64_t>(d) << 32 | static_cast<std::uint32_t>(cls));
      const int b = at == on_rep_link.end() ? 0 : at->second;
      for (int i = 0; i < b; ++i) links.push_back({d / 2, (d & 1) != 0});
    }
    std::vector<std::int64_t> key = {full.route_src[route], full.route_dst[route], rep_host[part.host[s.part_src[p]]],
                                     rep_host[part.host[s.part_dst[p]]],
                                     static_cast<std::int64_t>(bits_of(full.route_latency_s[route]))};
    for (const LinkUse& u : links) key.push_back(2 * u.link + (u.up ? 1 : 0));
    auto [it, added] = route_index.emplace(key, static_cast<int>(q.route_src.size()));
    if (added) {
      q.route_src.push_back(full.route_src[route]);
      q.route_dst.push_back(full.route_dst[route]);
      q.route_latency_s.push_back(full.route_latency_s[route]);
      q.route_links.insert(q.route_links.end(), links.begin(), links.end());
      q.route_link_offset.push_back(static_cast<int>(q.route_links.size()));
      // SimGrid finds a route by its hosts: a second route between the same hosts leaves from an alias.
      const int uses = pair_uses[{full.route_src[route], full.route_dst[route]}]++;
      q.route_comm_src.push_back(uses == 0 ? full.route_src[route] : next_alias++);
      q.route_comm_dst.push_back(full.route_dst[route]);
      q.route_exec_src.push_back(s.host_id[rep_host[part.host[s.part_src[p]]]]);
      q.route_exec_dst.push_back(s.host_id[rep_host[part.host[s.part_dst[p]]]]);
    }
    return route_of_class[cls] = it->second;
  };
  q.route_link_offset.push_back(0);

  q.task_schedule.resize(part.tasks);
  q.pending.resize(part.tasks);
  q.phase.resize(part.tasks);
  q.task_bytes.resize(part.tasks);
  q.task_delay_s.resize(part.tasks);
  q.flags.resize(part.tasks);
  q.part_offset.push_back(0);
  std::vector<std::pair<int, int>> edges;
  for (int c = 0; c < part.tasks; ++c) {
    const int t = rep_task[c];
    q.task_schedule[c] = full.task_schedule[t];
    q.pending[c] = full.pending[t];
    q.phase[c] = full.phase[t];
    q.task_bytes[c] = task_bytes[c];
    q.task_delay_s[c] = full.task_delay_s[t];
    q.flags[c] = full.flags[t];
    for (int k = s.pred.begin(t); k < s.pred.end(t); ++k) edges.emplace_back(part.task[s.pred.items[k]], c);
    std::vector<int> seen;
    for (int p = full.part_offset[t]; p < full.part_offset[t + 1]; ++p) {
      const int cls = part.part[p];
      if (std::find(seen.begin(), seen.end(), cls) != seen.end()) continue;  // one flow per class of the task's parts
      seen.push_back(cls);
      q.part_route.push_back(route_for(cls));
      q.part_rank.push_back(full.part_rank[rep_part[cls]]);
      q.payload.push_back(payload[cls]);
    }
    q.part_offset.push_back(static_cast<int>(q.part_route.size()));
  }
  const Csr succ = build_csr(part.tasks, edges);
  q.succ_offset = succ.offset;
  q.succ = succ.items;

  q.latency_in_routes = true;
  for (double latency : q.route_latency_s) q.latency_in_routes = q.latency_in_routes && latency == q.route_latency_s.front();
  // Hosts: the full run's (real ones keep their ids and speeds), then the aliases.
  q.hosts = full.hosts;
  q.host_info = full.host_info;
  for (int h = 0; h < s.hosts; ++h) q.host_info[h].speed /= host_copies[h];  // dense index = position in full.hosts
  std::unordered_map<int, int> info_of;
  for (std::size_t i = 0; i < full.hosts.size(); ++i) info_of.emplace(full.hosts[i], static_cast<int>(i));
  for (std::size_t r = 0; r < q.route_comm_src.size(); ++r)
    if (q.route_comm_src[r] != q.route_src[r]) {
      PlatformHost alias = full.host_info[info_of.at(q.route_src[r])];
      alias.name += "~" + std::to_string(q.route_comm_src[r]);
      q.hosts.push_back(q.route_comm_src[r]);
      q.host_info.push_back(alias);
    }
  std::vector<char> used(s.dlinks / 2, 0);
  for (const LinkUse& u : q.route_links) used[u.link] = 1;
  for (int l = 0; l < s.dlinks / 2; ++l)
    if (used[l]) q.links.push_back(l);
  return q;
}

}  // namespace

AggregationOutcome aggregate_run(const PlatformModel& model, const CompiledRun& full, bool gpu_reduce_kernel) {
  AggregationOutcome out;
  if (full.classes) {
    out.reason = "already aggregated";
    return out;
  }
  const Structure s = copy_classes::structure_of(model, full);
  const Partition part = copy_classes::refine(s, full, model, out.reason);

  if (!out.reason.empty()) return out;
  if (!copy_classes::verify(s, full, model, part)) {
    out.reason = "internal: the classes of copies were not exact (a hash collision); simulated in full";
    return out;
  }
  std::vector<int> host_copies;
  out.reason = exec_hosts(s, full, part, gpu_reduce_kernel, host_copies);
  if (!out.reason.empty()) return out;
  out.quotient = build_quotient(s, full, part, host_copies);
  out.aggregated = true;
  return out;
}

namespace {

std::string sci(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", v);
  return text;
}

// Transfers x transfers in flight, with in flight = transfers / levels of the DAG.
double engine_work(const CompiledRun& run, int& parts, int& in_flight) {
  Structure s;
  s.tasks = run.tasks();
  s.succ.offset = run.succ_offset;
  s.succ.items = run.succ;
  const std::vector<int> depth = depths(s, run);
  const int levels = depth.empty() ? 1 : *std::max_element(depth.begin(), depth.end()) + 1;
  parts = static_cast<int>(run.part_route.size());
  in_flight = std::max(1, static_cast<int>(std::ceil(static_cast<double>(parts) / levels)));
  return static_cast<double>(parts) * in_flight;
}

}  // namespace

CompiledRun engine_run(const PlatformModel& model, CompiledRun full, const RunOptions& options) {
  CompiledRun out;
  if (full.classes) {  // compiled from a symmetric schedule (symmetric_run.hpp): a quotient already
    if (options.gpu_reduce_kernel)
      throw SimulationError("internal: a schedule listed by its symmetry cannot share GPU reduction kernels "
                            "(--gpu-reduce): run its full schedule");
    out = std::move(full);
  } else if (options.aggregate) {
    AggregationOutcome a = aggregate_run(model, full, options.gpu_reduce_kernel);
    if (a.aggregated) {
      out = std::move(a.quotient);
    } else {
      full.engine_note = a.reason;
      out = std::move(full);
    }
  } else {
    full.engine_note = "aggregation turned off";
    out = std::move(full);
  }
  int parts = 0, in_flight = 0;
  const double work = engine_work(out, parts, in_flight);
  if (work > kMaxEngineWork) {
    std::string what;
    for (const CompiledSchedule& cs : out.schedules)
      what += (what.empty() ? "" : " with ") + cs.schedule->algorithm + " on " + std::to_string(cs.hosts_of_rank.size()) +
              " GPUs, " + units::format_bytes(cs.schedule->request.bytes);
    what += ": " + std::to_string(parts) + (out.classes ? " transfer classes" : " transfers") + " to simulate, ~" +
            std::to_string(in_flight) + " at once (~" + sci(work) + " engine steps, ~" + sci(work * kEngineSecondsPerWork) +
            " s)" + (out.classes ? "" : " (" + out.engine_note + ")");
    throw EngineLimitError("--gpus", "", what,
                           "at most " + sci(kMaxEngineWork) + " engine steps (transfers x transfers in flight, ~" +
                               sci(kMaxEngineWork * kEngineSecondsPerWork) +
                               " s) in one run; fewer GPUs, or the analytic model (--model analytic, racksim.analytic)");
  }
  return out;
}

}  // namespace racksim
