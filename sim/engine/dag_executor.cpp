#include "sim/engine/dag_executor.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/platform/simgrid_platform.hpp"

namespace racksim {

namespace sg4 = simgrid::s4u;

namespace {

// Per task only what changes while it runs (this process pays a page fault for every fresh page, so the
// state is kept small; what can be derived from the Schedule is derived when needed).
struct TaskRec {
  int schedule = 0;
  int pending = 0;                       // dependencies not yet complete
  int outstanding = 0;                   // parts still running
  int group = -1;                        // multicast group host of a multicast from a switch plane
  double start = -1, end = -1;
};

struct ScheduleInfo {
  int first = 0;                         // index of its first task in tasks_; its launch task is first + count
  int count = 0;
  double efficiency = 1;                 // the algorithm's bandwidth efficiency at this size
  double step_delay_s = 0, launch_delay_s = 0;
  std::vector<int> hosts_of_rank;
  std::map<int, double> link_bytes;      // link -> bytes this schedule put on it
};

struct ActRec {
  enum class Kind { switch_reduce, comm, gpu_reduce };
  Kind kind = Kind::comm;
  int task = -1;
  int dst = -1;           // index into the task's destinations (comm, gpu_reduce); -1: a multicast
  const PlatformRoute* route = nullptr;  // comm: its route (link accounting at start and end)
  sg4::ActivityPtr activity;
};

struct LinkStat {
  int active = 0;         // comms currently using the link (either direction)
  double busy_since = 0, busy_s = 0, max_utilization = 0;
  int active_pos = -1;    // position in the active list
  std::vector<std::pair<double, double>> intervals;  // busy intervals, for the trace
};

class Executor {
 public:
  Executor(const PlatformModel& model, const Calibration& calibration, const std::vector<const Schedule*>& schedules,
           const RunOptions& options, const std::vector<std::vector<int>>* rank_hosts)
      : model_(model), calibration_(calibration), schedules_(schedules), options_(options), rank_hosts_(rank_hosts) {}

  std::vector<RunResult> run();

 private:
  void validate(const Schedule& s, int ranks) const;
  int endpoint_host(int schedule, const Endpoint& e) const;
  const Task* task_of(int t) const;  // nullptr for a launch pseudo-task
  void prepare();
  void build_platform();
  void begin(int t);
  void after_delay(int t);
  void start_comms(int t);
  void send(int t, int k);                 // k: destination index, -1 for the multicast group
  int part_host(int t, int k) const;
  void part_done(int t);
  void on_completion(const sg4::Activity& a);
  void sample(double delta);
  void count_comm(const PlatformRoute& route, bool started);
  void launch(ActRec::Kind kind, int t, int dst, sg4::ActivityPtr activity);
  std::vector<RunResult> collect() const;

  const PlatformModel& model_;
  const Calibration& calibration_;
  const std::vector<const Schedule*>& schedules_;
  const RunOptions& options_;
  const std::vector<std::vector<int>>* rank_hosts_;
  std::vector<ScheduleInfo> info_;
  std::vector<TaskRec> tasks_;             // every schedule's tasks, then one launch task per schedule
  std::vector<int> succ_offset_, succ_;    // successors of task t: succ_[succ_offset_[t] .. succ_offset_[t+1])
  std::vector<ActRec> acts_;               // activity slots, reused (activity data = slot + 1)
  std::vector<int> free_acts_;
  std::vector<sg4::ActivityPtr> graveyard_;
  std::unique_ptr<SimgridPlatform> platform_;
  std::vector<LinkStat> link_stats_;
  std::vector<int> active_links_;
  std::string failure_;
};

void Executor::validate(const Schedule& s, int ranks) const {
  // Messages are built only on failure: this runs for every task of every run.
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
      if (e.kind == Endpoint::Kind::switch_plane && model_.switch_plane_host(e.index) < 0)
        fail(i, "", "switch plane " + std::to_string(e.index),
             "an NVLink domain with a switch plane on " + model_.graph().spec().id);
    };
    check(t.src);
    for (const auto& d : t.dsts) check(d);
  }
}

int Executor::endpoint_host(int schedule, const Endpoint& e) const {
  return e.kind == Endpoint::Kind::rank ? info_[schedule].hosts_of_rank[e.index] : model_.switch_plane_host(e.index);
}

const Task* Executor::task_of(int t) const {
  const ScheduleInfo& si = info_[tasks_[t].schedule];
  const int k = t - si.first;
  return k < si.count ? &schedules_[tasks_[t].schedule]->tasks[k] : nullptr;
}

void Executor::prepare() {
  int total = 0;
  for (const Schedule* s : schedules_) total += static_cast<int>(s->tasks.size()) + 1;
  tasks_.resize(total);
  std::vector<int> succ_count(total, 0);
  int next = 0;
  for (std::size_t si = 0; si < schedules_.size(); ++si) {
    const Schedule& s = *schedules_[si];
    ScheduleInfo info;
    if (rank_hosts_ != nullptr && !(*rank_hosts_)[si].empty()) {
      info.hosts_of_rank = (*rank_hosts_)[si];
    } else {
      for (int g : s.request.gpus) {
        if (g < 0 || g >= model_.graph().gpu_count())
          throw InputError("schedule " + s.algorithm, "/request/gpus", std::to_string(g),
                           "GPU indices in [0, " + std::to_string(model_.graph().gpu_count() - 1) + "]");
        if (!model_.gpu_failure(g).empty())
          throw SimulationError("GPU " + std::to_string(g) + " (" +
                                model_.graph().vertices()[model_.graph().gpu_vertex(g)].name +
                                ") cannot take part: " + model_.gpu_failure(g));
        info.hosts_of_rank.push_back(model_.gpu_host(g));
      }
    }
    validate(s, static_cast<int>(info.hosts_of_rank.size()));
    const AlgorithmCalibration& cal = calibration_.algorithm(s.algorithm);
    info.first = next;
    info.count = static_cast<int>(s.tasks.size());
    info.efficiency = cal.efficiency_at(static_cast<double>(s.request.bytes));
    info.step_delay_s = units::us_to_s(cal.step_overhead_us);
    info.launch_delay_s = units::us_to_s(cal.launch_overhead_us);
    info_.push_back(std::move(info));
    ScheduleInfo& in = info_.back();
    for (const Task& t : s.tasks) {
      TaskRec& r = tasks_[next + t.id];
      r.schedule = static_cast<int>(si);
      r.pending = t.deps.empty() ? 1 : static_cast<int>(t.deps.size());  // roots wait for the launch task
      const int src = endpoint_host(static_cast<int>(si), t.src);
      if (t.src.kind == Endpoint::Kind::switch_plane && t.dsts.size() > 1) {
        std::vector<int> members;
        for (const auto& d : t.dsts) members.push_back(endpoint_host(static_cast<int>(si), d));
        r.group = model_.multicast_group(members);
      }
      const int parts = r.group >= 0 ? 1 : static_cast<int>(t.dsts.size());
      for (int k = 0; k < parts; ++k) {
        const int dst = r.group >= 0 ? r.group : endpoint_host(static_cast<int>(si), t.dsts[k]);
        const PlatformRoute& route = model_.route(src, dst);
        if (!route.broken.empty())
          throw SimulationError(s.algorithm + " task " + std::to_string(t.id) + " (" + model_.host(src).name + " -> " +
                                model_.host(dst).name + ") cannot run: " + route.broken);
        for (const auto& use : route.links) in.link_bytes[use.link] += static_cast<double>(t.bytes);
      }
      for (int d : t.deps) ++succ_count[next + d];
      if (t.deps.empty()) ++succ_count[next + in.count];
    }
    tasks_[next + in.count].schedule = static_cast<int>(si);
    next += in.count + 1;
  }
  succ_offset_.assign(total + 1, 0);
  for (int t = 0; t < total; ++t) succ_offset_[t + 1] = succ_offset_[t] + succ_count[t];
  succ_.assign(succ_offset_[total], 0);
  std::vector<int> fill(succ_offset_.begin(), succ_offset_.end() - 1);
  for (std::size_t si = 0; si < schedules_.size(); ++si) {
    const ScheduleInfo& in = info_[si];
    for (const Task& t : schedules_[si]->tasks) {
      for (int d : t.deps) succ_[fill[in.first + d]++] = in.first + t.id;
      if (t.deps.empty()) succ_[fill[in.first + in.count]++] = in.first + t.id;
    }
  }
}

void Executor::build_platform() {
  std::vector<char> host_used(model_.host_count(), 0), link_used(model_.links().size(), 0);
  for (std::size_t si = 0; si < schedules_.size(); ++si) {
    for (const Task& t : schedules_[si]->tasks) {
      const int task = info_[si].first + t.id;
      const int src = endpoint_host(static_cast<int>(si), t.src);
      host_used[src] = 1;
      const int parts = tasks_[task].group >= 0 ? 1 : static_cast<int>(t.dsts.size());
      for (int k = 0; k < parts; ++k) {
        const int dst = part_host(task, tasks_[task].group >= 0 ? -1 : k);
        host_used[dst] = 1;
        for (const auto& use : model_.route(src, dst).links) link_used[use.link] = 1;
      }
    }
  }
  std::vector<int> hosts, links;
  for (std::size_t h = 0; h < host_used.size(); ++h)
    if (host_used[h]) hosts.push_back(static_cast<int>(h));
  for (std::size_t l = 0; l < link_used.size(); ++l)
    if (link_used[l]) links.push_back(static_cast<int>(l));
  SimgridPlatform::init_engine();
  platform_ = std::make_unique<SimgridPlatform>(model_, hosts, links);
  link_stats_.assign(model_.links().size(), LinkStat{});
}

void Executor::launch(ActRec::Kind kind, int t, int dst, sg4::ActivityPtr activity) {
  int slot;
  if (free_acts_.empty()) {
    slot = static_cast<int>(acts_.size());
    acts_.emplace_back();
  } else {
    slot = free_acts_.back();
    free_acts_.pop_back();
  }
  ActRec& rec = acts_[slot];
  rec = {kind, t, dst, nullptr, activity};
  activity->set_data(reinterpret_cast<void*>(static_cast<std::intptr_t>(slot) + 1));
  if (kind == ActRec::Kind::comm) {
    rec.route = &model_.route(endpoint_host(tasks_[t].schedule, task_of(t)->src), part_host(t, dst));
    count_comm(*rec.route, true);
    static_cast<sg4::Comm*>(activity.get())->start();
  } else {
    static_cast<sg4::Exec*>(activity.get())->start();
  }
}

void Executor::begin(int t) {
  TaskRec& r = tasks_[t];
  r.start = sg4::Engine::get_clock();
  const ScheduleInfo& in = info_[r.schedule];
  const double delay = task_of(t) == nullptr ? in.launch_delay_s : in.step_delay_s;
  if (delay > 0) {  // a pure delay: a kernel timer, no resource
    simgrid::kernel::timer::Timer::set(r.start + delay, [this, t] { after_delay(t); });
    return;
  }
  after_delay(t);
}

void Executor::after_delay(int t) {
  const Task* task = task_of(t);
  if (task != nullptr && task->src.kind == Endpoint::Kind::switch_plane && task->bytes > 0) {
    // Reduce at the switch when reducing transfers into this plane precede the task.
    const Schedule& s = *schedules_[tasks_[t].schedule];
    bool reduce = false;
    for (int d : task->deps) {
      const Task& dep = s.tasks[d];
      reduce = reduce || (dep.reduce && std::find(dep.dsts.begin(), dep.dsts.end(), task->src) != dep.dsts.end());
    }
    if (reduce) {
      // The plane reduces the chunk at the line rate of all its ports (PlatformModel: its host speed).
      auto exec = sg4::Exec::init();
      exec->set_flops_amount(static_cast<double>(task->bytes) / info_[tasks_[t].schedule].efficiency)
          ->set_host(platform_->host(endpoint_host(tasks_[t].schedule, task->src)));
      launch(ActRec::Kind::switch_reduce, t, -1, exec);
      return;
    }
  }
  start_comms(t);
}

void Executor::start_comms(int t) {
  TaskRec& r = tasks_[t];
  const Task* task = task_of(t);
  if (task == nullptr) {  // a launch task: nothing to send
    part_done(t);
    return;
  }
  if (r.group >= 0) {  // a multicast from a switch plane: one transfer to the group
    r.outstanding = 1;
    send(t, -1);
    return;
  }
  const int src = endpoint_host(r.schedule, task->src);
  r.outstanding = static_cast<int>(task->dsts.size());
  for (std::size_t k = 0; k < task->dsts.size(); ++k) {
    const int dst = endpoint_host(r.schedule, task->dsts[k]);
    if (dst == src) {  // a local copy: free in this model
      part_done(t);
      continue;
    }
    send(t, static_cast<int>(k));
  }
}

void Executor::send(int t, int k) {
  const Task* task = task_of(t);
  const int schedule = tasks_[t].schedule;
  const auto payload =
      static_cast<std::uint64_t>(std::llround(static_cast<double>(task->bytes) / info_[schedule].efficiency));
  auto comm = sg4::Comm::sendto_init(platform_->host(endpoint_host(schedule, task->src)),
                                     platform_->host(part_host(t, k)));
  comm->set_payload_size(payload);
  launch(ActRec::Kind::comm, t, k, comm);
}

int Executor::part_host(int t, int k) const {
  return k < 0 ? tasks_[t].group : endpoint_host(tasks_[t].schedule, task_of(t)->dsts[k]);
}

void Executor::count_comm(const PlatformRoute& route, bool started) {
  const double now = sg4::Engine::get_clock();
  for (const auto& use : route.links) {
    LinkStat& s = link_stats_[use.link];
    if (started) {
      if (s.active++ == 0) {
        s.busy_since = now;
        s.active_pos = static_cast<int>(active_links_.size());
        active_links_.push_back(use.link);
      }
    } else if (--s.active == 0) {
      s.busy_s += now - s.busy_since;
      if (options_.record_trace) s.intervals.emplace_back(s.busy_since, now);
      const int last = active_links_.back();
      active_links_[s.active_pos] = last;
      link_stats_[last].active_pos = s.active_pos;
      active_links_.pop_back();
      s.active_pos = -1;
    }
  }
}

void Executor::part_done(int t) {
  TaskRec& r = tasks_[t];
  if (task_of(t) != nullptr && --r.outstanding > 0) return;
  r.end = sg4::Engine::get_clock();
  for (int i = succ_offset_[t]; i < succ_offset_[t + 1]; ++i)
    if (--tasks_[succ_[i]].pending == 0) begin(succ_[i]);
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
    case ActRec::Kind::switch_reduce: start_comms(t); break;
    case ActRec::Kind::comm: {
      count_comm(*rec.route, false);
      const Task* task = task_of(t);
      if (options_.gpu_reduce_kernel && task->reduce && rec.dst >= 0 && task->dsts[rec.dst].kind == Endpoint::Kind::rank) {
        // NCCL's reduction kernel: read two operands and write the sum at the GPU's HBM bandwidth.
        auto exec = sg4::Exec::init();
        exec->set_flops_amount(3.0 * static_cast<double>(task->bytes))
            ->set_host(platform_->host(endpoint_host(tasks_[t].schedule, task->dsts[rec.dst])));
        launch(ActRec::Kind::gpu_reduce, t, rec.dst, exec);
      } else {
        part_done(t);
      }
      break;
    }
    case ActRec::Kind::gpu_reduce: part_done(t); break;
  }
}

void Executor::sample(double delta) {
  graveyard_.clear();  // no activity callback is running here: safe to drop finished activities
  if (!(delta > 0)) return;
  for (int l : active_links_) {
    const double capacity = model_.links()[l].bandwidth_Bps;
    LinkStat& s = link_stats_[l];
    for (bool up : {true, false}) s.max_utilization = std::max(s.max_utilization, platform_->link(l, up)->get_usage() / capacity);
  }
}

std::vector<RunResult> Executor::run() {
  prepare();
  build_platform();
  sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_completion(a); });
  sg4::Engine::on_time_advance_cb([this](double delta) { sample(delta); });
  for (const auto& in : info_) {
    tasks_[in.first + in.count].pending = 0;
    begin(in.first + in.count);
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
  for (std::size_t si = 0; si < schedules_.size(); ++si) {
    const Schedule& s = *schedules_[si];
    const ScheduleInfo& in = info_[si];
    RunResult r;
    r.op = to_string(s.request.op);
    const auto slash = s.algorithm.find('/');
    r.algorithm = slash == std::string::npos ? s.algorithm : s.algorithm.substr(slash + 1);
    r.algorithm_note = s.note;
    r.gpus = static_cast<int>(in.hosts_of_rank.size());
    r.bytes = s.request.bytes;
    r.chunk_bytes = s.request.chunk_bytes;
    for (int i = 0; i <= in.count; ++i) r.time_s = std::max(r.time_s, tasks_[in.first + i].end);
    if (r.time_s > 0) {
      r.algbw_Bps = static_cast<double>(s.request.bytes) / r.time_s;
      r.busbw_Bps = r.algbw_Bps * busbw_factor(s.request.op, r.gpus);
    }
    std::vector<double> first(s.phases.size(), std::numeric_limits<double>::infinity()), last(s.phases.size(), 0.0);
    for (int i = 0; i < in.count; ++i) {
      const int p = s.tasks[i].phase;
      first[p] = std::min(first[p], tasks_[in.first + i].start);
      last[p] = std::max(last[p], tasks_[in.first + i].end);
    }
    for (std::size_t p = 0; p < s.phases.size(); ++p)
      r.phases.push_back({s.phases[p], std::isfinite(first[p]) ? last[p] - first[p] : 0.0});
    for (const auto& [l, bytes] : in.link_bytes) {
      if (bytes <= 0) continue;
      const PlatformLink& pl = model_.links()[l];
      r.links.push_back({pl.name, pl.kind, bytes, link_stats_[l].busy_s, std::min(1.0, link_stats_[l].max_utilization)});
    }
    if (options_.record_trace) {
      for (int i = 0; i < in.count; ++i) {
        const Task& t = s.tasks[i];
        const std::string track = t.src.kind == Endpoint::Kind::rank ? model_.host(in.hosts_of_rank[t.src.index]).name
                                                                     : "switch d" + std::to_string(t.src.index);
        r.trace.push_back({track, s.phases[t.phase] + ": task " + std::to_string(t.id), tasks_[in.first + i].start,
                           tasks_[in.first + i].end});
      }
      for (const auto& [l, bytes] : in.link_bytes)
        for (const auto& [a, b] : link_stats_[l].intervals) r.trace.push_back({"link " + model_.links()[l].name, "busy", a, b});
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<RunResult> execute_schedules(const PlatformModel& model, const Calibration& calibration,
                                         const std::vector<const Schedule*>& schedules, const RunOptions& options,
                                         const std::vector<std::vector<int>>* rank_hosts) {
  Executor executor(model, calibration, schedules, options, rank_hosts);
  return executor.run();
}

}  // namespace racksim
