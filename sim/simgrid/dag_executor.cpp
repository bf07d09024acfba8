#include "sim/engine/dag_executor.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/engine/aggregation.hpp"
#include "sim/platform/simgrid_platform.hpp"

namespace racksim {

namespace sg4 = simgrid::s4u;

namespace {

struct TaskState {
  int pending = 0;      // dependencies not yet complete
  int outstanding = 0;  // parts still running
  double start = -1, end = -1;
};

struct ActRec {
  enum class Kind { switch_reduce, comm, gpu_reduce };
  Kind kind = Kind::comm;
  int task = -1;
  int part = -1;  // index into the run's parts (comm, gpu_reduce)
  sg4::ActivityPtr activity;
};

struct LinkStat {
  int active = 0;  // comms currently using the link (either direction)
  double busy_since = 0, busy_s = 0, max_utilization = 0;
  int active_pos = -1;  // position in the active list
  std::vector<std::pair<double, double>> intervals;  // busy intervals, for the trace
};

class Executor {
 public:
  Executor(const PlatformModel& model, const CompiledRun& run, const RunOptions& options)
      : model_(model), run_(run), options_(options) {}
  std::vector<RunResult> execute();

 private:
  void begin(int t);
  void after_delay(int t);
  void start_parts(int t);
  void start_comm(int t, int p);
  void part_done(int t);
  void launch(ActRec::Kind kind, int t, int part, sg4::ActivityPtr activity);
  void on_completion(const sg4::Activity& a);
  void count_comm(int route, bool started);
  void sample(double delta);
  int stat_key(const LinkUse& use) const;
  const TaskState& full_task(int t) const { return tasks_[run_.task_of_full(t)]; }
  LinkStat link_stat(int link) const;
  std::vector<RunResult> collect() const;

  const PlatformModel& model_;
  const CompiledRun& run_;
  const RunOptions& options_;
  std::vector<TaskState> tasks_;
  std::vector<ActRec> acts_;  // activity slots, reused (activity data = slot + 1)
  std::vector<int> free_acts_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::unique_ptr<SimgridPlatform> platform_;
  std::vector<LinkStat> link_stats_;
  std::vector<int> active_links_;
  // Merged activity of a (representative up, representative down) pair in a quotient run: many links
  // share one pair (every GPU port of a class), each needing the same merge.
  mutable std::map<std::pair<int, int>, LinkStat> merged_;
  std::string failure_;
};

void Executor::launch(ActRec::Kind kind, int t, int part, sg4::ActivityPtr activity) {
  int slot;
  if (free_acts_.empty()) {
    slot = static_cast<int>(acts_.size());
    acts_.emplace_back();
  } else {
    slot = free_acts_.back();
    free_acts_.pop_back();
  }
  acts_[slot] = {kind, t, part, activity};
  activity->set_data(reinterpret_cast<void*>(static_cast<std::intptr_t>(slot) + 1));
  if (kind == ActRec::Kind::comm) {
    count_comm(run_.part_route[part], true);
    static_cast<sg4::Comm*>(activity.get())->start();
  } else {
    static_cast<sg4::Exec*>(activity.get())->start();
  }
}

void Executor::begin(int t) {
  TaskState& s = tasks_[t];
  s.start = sg4::Engine::get_clock();
  const CompiledSchedule& cs = run_.schedules[run_.task_schedule[t]];
  const double delay = run_.is_launch(t) ? cs.launch_delay_s : run_.task_delay_s[t];
  if (delay > 0) {  // a pure delay: a kernel timer, no resource
    simgrid::kernel::timer::Timer::set(s.start + delay, [this, t] { after_delay(t); });
    return;
  }
  after_delay(t);
}

void Executor::after_delay(int t) {
  if ((run_.flags[t] & CompiledRun::kSwitchReduce) && run_.task_bytes[t] > 0) {
    // The plane reduces the chunk at the line rate of all its ports (PlatformModel: its host speed).
    const int part = run_.part_offset[t];
    auto exec = sg4::Exec::init();
    exec->set_flops_amount(run_.payload[part])->set_host(platform_->host(run_.exec_src(run_.part_route[part])));
    launch(ActRec::Kind::switch_reduce, t, part, exec);
    return;
  }
  start_parts(t);
}

void Executor::start_parts(int t) {
  const int first = run_.part_offset[t], last = run_.part_offset[t + 1];
  tasks_[t].outstanding = std::max(1, last - first);
  if (first == last) {  // a launch task: nothing to send
    part_done(t);
    return;
  }
  for (int p = first; p < last; ++p) {
    const int r = run_.part_route[p];
    if (run_.route_src[r] == run_.route_dst[r]) {  // a local copy: free in this model
      part_done(t);
      continue;
    }
    const double latency = run_.latency_in_routes ? 0.0 : run_.route_latency_s[r];
    if (latency > 0)
      simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + latency, [this, t, p] { start_comm(t, p); });
    else
      start_comm(t, p);
  }
}

// The route's latency has passed (a timer, above): the bytes now flow. When routes differ in latency
// SimGrid sees them without it, so every flow has the same max-min weight (CM02 weights a flow by its
// route latency, which made flows of different latency on one link share unequally: TOOLCHAIN.md); when
// all routes have the same latency SimGrid waits it itself (same weights, no timer per transfer).
void Executor::start_comm(int t, int p) {
  const int r = run_.part_route[p];
  const bool alias = !run_.route_comm_src.empty();
  auto comm = sg4::Comm::sendto_init(platform_->host(alias ? run_.route_comm_src[r] : run_.route_src[r]),
                                     platform_->host(alias ? run_.route_comm_dst[r] : run_.route_dst[r]));
  comm->set_payload_size(static_cast<std::uint64_t>(std::llround(run_.payload[p])));
  launch(ActRec::Kind::comm, t, p, comm);
}

void Executor::part_done(int t) {
  TaskState& s = tasks_[t];
  if (--s.outstanding > 0) return;
  s.end = sg4::Engine::get_clock();
  for (int i = run_.succ_offset[t]; i < run_.succ_offset[t + 1]; ++i)
    if (--tasks_[run_.succ[i]].pending == 0) begin(run_.succ[i]);
}

void Executor::count_comm(int route, bool started) {
  const double now = sg4::Engine::get_clock();
  for (int i = run_.route_link_offset[route]; i < run_.route_link_offset[route + 1]; ++i) {
    const int link = stat_key(run_.route_links[i]);
    LinkStat& s = link_stats_[link];
    if (started) {
      if (s.active++ == 0) {
        // Busy from when bytes flow: after the route latency, which SimGrid waits itself when it is uniform.
        s.busy_since = now + (run_.latency_in_routes ? run_.route_latency_s[route] : 0.0);
        s.active_pos = static_cast<int>(active_links_.size());
        active_links_.push_back(link);
      }
    } else if (--s.active == 0) {
      s.busy_s += now - s.busy_since;
      if (options_.record_trace || run_.classes) {
        // A flow that starts as the last one ends keeps the link busy: one span, as the union of a quotient
        // run's directed links gives (link_stat), whatever order the end and the start were processed in.
        if (!s.intervals.empty() && s.intervals.back().second >= s.busy_since)
          s.intervals.back().second = std::max(s.intervals.back().second, now);
        else
          s.intervals.emplace_back(s.busy_since, now);
      }
      const int moved = active_links_.back();
      active_links_[s.active_pos] = moved;
      link_stats_[moved].active_pos = s.active_pos;
      active_links_.pop_back();
      s.active_pos = -1;
    }
  }
}

void Executor::on_completion(const sg4::Activity& a) {
  const auto slot = reinterpret_cast<std::intptr_t>(a.get_data<void>()) - 1;
  if (slot < 0 || slot >= static_cast<std::intptr_t>(acts_.size())) return;
  const ActRec rec = acts_[slot];
  graveyard_.push_back(std::move(acts_[slot].activity));
  free_acts_.push_back(static_cast<int>(slot));
  if (a.get_state() != sg4::Activity::State::FINISHED) {
    if (failure_.empty()) failure_ = "an activity of task " + std::to_string(rec.task) + " did not finish";
    return;
  }
  const int t = rec.task;
  switch (rec.kind) {
    case ActRec::Kind::switch_reduce: start_parts(t); break;
    case ActRec::Kind::comm:
      count_comm(run_.part_route[rec.part], false);
      if (options_.gpu_reduce_kernel && (run_.flags[t] & CompiledRun::kReduce) && run_.part_rank[rec.part] >= 0) {
        // NCCL's reduction kernel: read two operands and write the sum at the GPU's HBM bandwidth.
        auto exec = sg4::Exec::init();
        exec->set_flops_amount(3.0 * run_.task_bytes[t])->set_host(platform_->host(run_.exec_dst(run_.part_route[rec.part])));
        launch(ActRec::Kind::gpu_reduce, t, rec.part, exec);
      } else {
        part_done(t);
      }
      break;
    case ActRec::Kind::gpu_reduce: part_done(t); break;
  }
}

void Executor::sample(double delta) {
  graveyard_.clear();  // no activity callback is running here: safe to drop finished activities
  if (!(delta > 0)) return;
  for (int key : active_links_) {
    LinkStat& s = link_stats_[key];
    // A link once full stays reported full (results cap the utilisation at 1): its usage, a sum over every flow
    // on it at each time advance, is not read again (7 % of a flat ring over 8 racks).
    if (s.max_utilization >= 1.0) continue;
    if (run_.classes) {  // keyed by directed link
      const int l = key / 2;
      s.max_utilization = std::max(s.max_utilization, platform_->link(l, (key & 1) != 0)->get_usage() / model_.links()[l].bandwidth_Bps);
      continue;
    }
    const double capacity = model_.links()[key].bandwidth_Bps;
    for (bool up : {true, false}) s.max_utilization = std::max(s.max_utilization, platform_->link(key, up)->get_usage() / capacity);
  }
}

// Activity per link (both directions together) in a full run; per directed link in a quotient run,
// where one directed link stands for its class and the two directions of a link may be in different ones.
int Executor::stat_key(const LinkUse& use) const { return run_.classes ? 2 * use.link + (use.up ? 1 : 0) : use.link; }

LinkStat Executor::link_stat(int link) const {
  if (!run_.classes) return link_stats_[link];
  const std::pair<int, int> pair{run_.classes->directed_link_rep[2 * link + 1], run_.classes->directed_link_rep[2 * link]};
  const auto cached = merged_.find(pair);
  if (cached != merged_.end()) return cached->second;
  LinkStat& out = merged_[pair];
  std::vector<std::pair<double, double>> all;
  for (int d : {2 * link + 1, 2 * link}) {
    const int rep = run_.classes->directed_link_rep[d];
    if (rep < 0) continue;
    const LinkStat& s = link_stats_[rep];
    out.max_utilization = std::max(out.max_utilization, s.max_utilization);
    all.insert(all.end(), s.intervals.begin(), s.intervals.end());
  }
  std::sort(all.begin(), all.end());
  for (const auto& [a, b] : all) {  // busy while either direction is: the union of the intervals
    if (!out.intervals.empty() && a <= out.intervals.back().second) {
      out.intervals.back().second = std::max(out.intervals.back().second, b);
    } else {
      out.intervals.emplace_back(a, b);
    }
  }
  for (const auto& [a, b] : out.intervals) out.busy_s += b - a;
  return out;
}

std::vector<RunResult> Executor::execute() {
  tasks_.resize(run_.tasks());
  for (int t = 0; t < run_.tasks(); ++t) tasks_[t].pending = run_.pending[t];
  SimgridPlatform::init_engine();
  platform_ = std::make_unique<SimgridPlatform>(model_, run_);
  link_stats_.assign(model_.links().size() * (run_.classes ? 2 : 1), LinkStat{});
  sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_completion(a); });
  sg4::Engine::on_time_advance_cb([this](double delta) { sample(delta); });
  for (const auto& cs : run_.schedules) {
    const int launch_task = run_.task_of_full(cs.first + cs.count);
    if (tasks_[launch_task].pending == 0) begin(launch_task);  // chained ones wait
  }
  sg4::Engine::get_instance()->run();
  graveyard_.clear();
  if (!failure_.empty()) throw SimulationError("the simulation failed: " + failure_);
  for (const auto& t : tasks_)
    if (t.end < 0) throw SimulationError("internal: a task never ran (a dependency cycle in the schedule?)");
  return collect();
}

std::vector<RunResult> Executor::collect() const {
  std::vector<RunResult> out;
  for (const CompiledSchedule& cs : run_.schedules) {
    const Schedule& s = *cs.schedule;
    RunResult r;
    r.op = to_string(s.request.op);
    const auto slash = s.algorithm.find('/');
    r.algorithm = slash == std::string::npos ? s.algorithm : s.algorithm.substr(slash + 1);
    r.algorithm_note = s.note;
    r.gpus = static_cast<int>(cs.hosts_of_rank.size());
    r.bytes = s.request.bytes;
    r.chunk_bytes = s.request.chunk_bytes;
    // From its launch (0, or when the schedule it follows ended) to its last task's end.
    for (int i = 0; i <= cs.count; ++i) r.time_s = std::max(r.time_s, full_task(cs.first + i).end);
    r.time_s -= full_task(cs.first + cs.count).start;
    if (r.time_s > 0) {
      r.algbw_Bps = static_cast<double>(s.request.bytes) / r.time_s;
      r.busbw_Bps = r.algbw_Bps * busbw_factor(s.request.op, r.gpus);
    }
    std::vector<double> first(s.phases.size(), std::numeric_limits<double>::infinity()), last(s.phases.size(), 0.0);
    for (int i = 0; i < cs.count; ++i) {
      const int p = run_.phase[run_.task_of_full(cs.first + i)];
      first[p] = std::min(first[p], full_task(cs.first + i).start);
      last[p] = std::max(last[p], full_task(cs.first + i).end);
    }
    for (std::size_t p = 0; p < s.phases.size(); ++p)
      r.phases.push_back({s.phases[p], std::isfinite(first[p]) ? last[p] - first[p] : 0.0});
    for (const auto& [l, bytes] : cs.link_bytes) {
      const PlatformLink& pl = model_.links()[l];
      const LinkStat stat = link_stat(l);
      r.links.push_back({pl.name, pl.kind, bytes, stat.busy_s, std::min(1.0, stat.max_utilization)});
    }
    if (options_.record_trace) {
      for (int i = 0; i < cs.count; ++i) {
        const Task& t = s.tasks[i];
        const std::string track = t.src.kind == Endpoint::Kind::rank ? model_.host(cs.hosts_of_rank[t.src.index]).name
                                                                     : "switch d" + std::to_string(t.src.index);
        r.trace.push_back({track, s.phases[t.phase] + ": task " + std::to_string(t.id), full_task(cs.first + i).start,
                           full_task(cs.first + i).end});
      }
      for (const auto& [l, bytes] : cs.link_bytes)
        for (const auto& [a, b] : link_stat(l).intervals) r.trace.push_back({"link " + model_.links()[l].name, "busy", a, b});
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<RunResult> execute_compiled(const PlatformModel& model, const CompiledRun& run, const RunOptions& options) {
  EngineRun engine;
  if (run.classes) {
    // The full run's tasks, less each schedule's launch task: a quotient compiled from a symmetric schedule numbers
    // its schedule by the listed tasks, so its schedules' counts are not the full ones.
    engine.tasks = run.classes->full_tasks - static_cast<int>(run.schedules.size());
    engine.mode = "aggregated";
    engine.note = run.engine_note;  // how the quotient was had, where the schedule's symmetry gave it
    for (int c = 0; c < run.tasks(); ++c) engine.simulated_tasks += !run.is_launch(c);
  } else {
    for (const CompiledSchedule& cs : run.schedules) engine.tasks += cs.count;
    engine.mode = "full";
    engine.simulated_tasks = engine.tasks;
    engine.note = run.engine_note;
  }
  std::vector<RunResult> results = Executor(model, run, options).execute();
  for (RunResult& r : results) r.engine = engine;
  return results;
}

std::vector<RunResult> execute_schedules(const PlatformModel& model, const Calibration& calibration,
                                         const std::vector<const Schedule*>& schedules, const RunOptions& options,
                                         const std::vector<std::vector<int>>* rank_hosts) {
  const CompiledRun run = engine_run(model, compile_run(model, calibration, schedules, rank_hosts), options);
  return execute_compiled(model, run, options);
}

}  // namespace racksim
