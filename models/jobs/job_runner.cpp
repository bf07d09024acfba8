#include "models/jobs/job_runner.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "models/collectives/registry.hpp"
#include "models/failures/failure_effects.hpp"
#include "models/planner/plan.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/platform/platform_model.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

struct Stage {
  std::vector<int> schedules;  // indices into BuiltJob::schedules
  int collective = 0;          // index into the job's collectives; collectives.size() for a planner step's compute
};

std::string compute_algorithm(const JobSpec& job) { return "jobs/compute-" + job.name; }

// A training step from the planner (JobStepSpec): its best layout for the model on the job's GPU count,
// the mesh from the layout's order, and the data-parallel gradient collectives over the "dp" groups.
void plan_step(JobSpec& j, const JobMix& mix, int racks, const std::string& topology_dir) {
  PlanRequest p;
  p.system = mix.system;
  p.racks = racks;
  p.model = j.step->model;
  p.job.global_batch = j.step->global_batch;
  p.job.seq_len = j.step->seq_len;
  p.gpus = static_cast<int>(j.gpus.size());
  p.top = 1;
  p.engine_top = 0;
  p.failures = false;
  p.compare.clear();
  p.calibration = mix.calibration;
  p.topology_dir = topology_dir;
  const PlanResult plan = run_plan(p);
  if (plan.search.ranked.empty())
    throw SimulationError("job " + j.name + ": the planner found no layout of " + j.step->model + " on " +
                          std::to_string(j.gpus.size()) + " GPUs");
  const Candidate& c = plan.search.ranked.front();
  j.mesh_shape.clear();
  j.mesh_dim_names.clear();
  for (MeshDim d : c.layout.order)
    if (c.layout.size(d) > 1) {
      j.mesh_shape.push_back(c.layout.size(d));
      j.mesh_dim_names.push_back(to_string(d));
    }
  if (j.mesh_shape.empty()) {
    j.mesh_shape = {static_cast<int>(j.gpus.size())};
    j.mesh_dim_names = {"world"};
  }
  PlannedStep ps;
  ps.layout = c.layout.degrees() + ", ZeRO-" + std::to_string(c.layout.zero_stage);
  ps.planner_step_s = c.estimate.step_s;
  double grad_bytes = 0;
  for (const auto& ct : c.estimate.comm)
    if (ct.kind == "dp") {
      ps.dp_total_s = ct.total_s;
      ps.dp_exposed_s = ct.exposed_s;
      grad_bytes = ct.bytes;
    }
  ps.compute_s = std::max(0.0, ps.planner_step_s - ps.dp_total_s);
  // The DP collectives the planner priced (step_model.cpp): ZeRO-0 an all-reduce of the gradients; ZeRO-1 a
  // reduce-scatter of them and an all-gather of the bf16 parameters; ZeRO-2 the reduce-scatter every
  // micro-batch; ZeRO-3 (FSDP) two all-gathers and a reduce-scatter every micro-batch.
  j.collectives.clear();
  if (c.layout.dp > 1 && grad_bytes >= 1) {
    const TrainingJob defaults;
    const auto gd = static_cast<std::uint64_t>(std::llround(grad_bytes));
    const auto pd = static_cast<std::uint64_t>(std::llround(grad_bytes / defaults.grad_bytes * 2));
    const int m = std::max(1, c.layout.micro_batches);
    switch (c.layout.zero_stage) {
      case 0: j.collectives.push_back({CollectiveOp::all_reduce, "auto", gd, "dp", 1}); break;
      case 1:
        j.collectives.push_back({CollectiveOp::reduce_scatter, "auto", gd, "dp", 1});
        j.collectives.push_back({CollectiveOp::all_gather, "auto", pd, "dp", 1});
        break;
      case 2:
        j.collectives.push_back({CollectiveOp::reduce_scatter, "auto", gd, "dp", m});
        j.collectives.push_back({CollectiveOp::all_gather, "auto", pd, "dp", 1});
        break;
      default:
        j.collectives.push_back({CollectiveOp::all_gather, "auto", pd, "dp", 2 * m});
        j.collectives.push_back({CollectiveOp::reduce_scatter, "auto", gd, "dp", m});
        break;
    }
  }
  j.planned = ps;
}

struct BuiltJob {
  std::deque<Schedule> schedules;  // deque: pointers stay valid as barriers are added
  std::vector<Stage> stages;
  std::vector<int> groups;         // per collective: groups that communicate
  std::vector<std::string> algorithm;
};

BuiltJob build_job(const JobSpec& job, const TopologyGraph& g, const Calibration& cal) {
  BuiltJob b;
  if (job.planned) {  // the step's compute: a pure delay (the launch of a task-less schedule)
    Schedule compute;
    compute.algorithm = compute_algorithm(job);
    // Carried by the schedule itself, as build_schedule's NCCL terms are: a calibration entry under a name
    // that is no collective ("jobs/compute-x") was refused by the engine process that re-reads the
    // calibration (`racksim jobs planner-steps` failed until session 41).
    compute.exec.set = true;
    compute.exec.launch_s = job.planned->compute_s;
    compute.request.gpus = {job.gpus.front()};
    compute.request.bytes = 1;
    b.schedules.push_back(std::move(compute));
    b.stages.push_back({{0}, static_cast<int>(job.collectives.size())});
  }
  for (std::size_t c = 0; c < job.collectives.size(); ++c) {
    const JobCollective& jc = job.collectives[c];
    std::vector<std::vector<int>> groups;
    for (auto& group : mesh_groups(job, jc.dim))
      if (group.size() >= 2) groups.push_back(std::move(group));  // one GPU alone communicates nothing
    b.groups.push_back(static_cast<int>(groups.size()));
    b.algorithm.push_back("");
    for (int rep = 0; rep < jc.repeat; ++rep) {
      Stage st;
      st.collective = static_cast<int>(c);
      for (const auto& group : groups) {
        CollectiveRequest r;
        r.op = jc.op;
        r.algorithm = jc.algorithm;
        r.inner_algorithm = jc.inner_algorithm;
        r.gpus = group;
        r.bytes = jc.bytes;
        b.schedules.push_back(build_schedule(r, g, cal));  // auto picks with the mix's calibration
        st.schedules.push_back(static_cast<int>(b.schedules.size()) - 1);
        if (b.algorithm.back().empty()) {
          const std::string& a = b.schedules.back().algorithm;
          b.algorithm.back() = a.substr(a.find('/') + 1);
        }
      }
      b.stages.push_back(std::move(st));
    }
  }
  return b;
}

// A job's schedules, each stage waiting for the previous one (through a task-less barrier when both have
// several groups, so that the dependencies stay linear in the number of tasks).
struct Linked {
  std::vector<const Schedule*> schedules;
  std::vector<std::vector<int>> after;
  std::vector<std::vector<std::vector<int>>> stage_runs;  // [job][stage] -> indices into schedules
  std::deque<Schedule> barriers;
};

void link_job(const JobSpec& job, const BuiltJob& b, Linked& l) {
  l.stage_runs.emplace_back();
  std::vector<int> prev;
  for (const Stage& st : b.stages) {
    std::vector<int> wait = prev;
    if (prev.size() > 1 && st.schedules.size() > 1) {
      Schedule barrier;
      barrier.algorithm = "jobs/barrier";
      barrier.request.gpus = {job.gpus.front()};
      barrier.request.bytes = 1;
      l.barriers.push_back(std::move(barrier));
      l.schedules.push_back(&l.barriers.back());
      l.after.push_back(prev);
      wait = {static_cast<int>(l.schedules.size()) - 1};
    }
    std::vector<int> mine;
    for (int s : st.schedules) {
      l.schedules.push_back(&b.schedules[s]);
      l.after.push_back(wait);
      mine.push_back(static_cast<int>(l.schedules.size()) - 1);
    }
    if (!mine.empty()) prev = mine;
    l.stage_runs.back().push_back(mine);
  }
}

struct JobTimes {
  double total_s = 0;
  std::vector<double> per_collective_s;  // summed over repeats
  std::map<std::string, std::pair<std::string, double>> link_bytes;  // name -> (kind, bytes)
  std::map<std::string, double> link_utilization;
};

std::vector<JobTimes> run_jobs(const Simulation& sim, const std::vector<const JobSpec*>& jobs,
                               const std::vector<const BuiltJob*>& built) {
  Linked l;
  for (std::size_t j = 0; j < jobs.size(); ++j) link_job(*jobs[j], *built[j], l);
  const std::vector<RunResult> results = sim.run_after(l.schedules, l.after);
  std::vector<JobTimes> out(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    JobTimes& t = out[j];
    t.per_collective_s.assign(jobs[j]->collectives.size() + 1, 0.0);  // the last: a planner step's compute
    for (std::size_t s = 0; s < built[j]->stages.size(); ++s) {
      double stage_s = 0;
      for (int idx : l.stage_runs[j][s]) {
        const RunResult& r = results[idx];
        stage_s = std::max(stage_s, r.time_s);
        for (const auto& link : r.links) {
          auto& [kind, bytes] = t.link_bytes[link.name];
          kind = link.kind;
          bytes += link.bytes;
          t.link_utilization[link.name] = std::max(t.link_utilization[link.name], link.max_utilization);
        }
      }
      t.per_collective_s[built[j]->stages[s].collective] += stage_s;
      t.total_s += stage_s;
    }
  }
  return out;
}

// after / before - 1, with differences below 1e-9 (the order SimGrid sums in) reported as none.
double relative_change(double after, double before) {
  if (!(before > 0)) return 0;
  const double x = after / before - 1;
  return std::abs(x) < 1e-9 ? 0.0 : x;
}

std::string collective_label(const JobCollective& c, int groups, int group_size) {
  std::string s = std::string(to_string(c.op)) + " " + units::format_bytes(c.bytes);
  if (!c.dim.empty()) s += " over " + c.dim + " (" + std::to_string(groups) + " groups of " + std::to_string(group_size) + ")";
  if (c.repeat > 1) s += " x" + std::to_string(c.repeat);
  return s;
}

}  // namespace

MixResult run_job_mix(const JobMix& mix, const std::vector<std::string>& extra_failures, const std::string& topology_dir,
                      const RecoveryTimes& recovery) {
  const SystemCatalog catalog = topology_dir.empty() ? SystemCatalog::shipped() : SystemCatalog(topology_dir);
  TopologySpec spec = catalog.load(mix.system);
  if (mix.oversubscription) {
    if (!spec.scale_out)
      throw InputError("oversubscription", "", number_text(*mix.oversubscription), "a system with a scale-out fabric");
    spec.scale_out->oversubscription = *mix.oversubscription;
  }
  TopologyGraph graph(spec, mix.racks ? *mix.racks : spec.rack.default_racks);
  if (!mix.partitions.empty()) graph.apply_partitions(parse_partitions(mix.partitions, graph, "partitions"));
  const Calibration cal = load_calibration(mix.calibration);
  std::vector<JobSpec> jobs = resolve_jobs(mix, graph);
  for (auto& j : jobs)
    if (j.step) plan_step(j, mix, graph.racks(), topology_dir);

  MixResult out;
  out.name = mix.name;
  out.system = spec.id;
  out.racks = graph.racks();
  out.rack_unit = spec.rack.unit;
  out.calibration = cal.name;
  out.mode = to_string(mix.mode);
  out.partitions_spec = mix.partitions;
  out.recovery = recovery;
  for (const auto& p : graph.partitioning().partitions) out.partitions.emplace_back(p.name, p.trays);

  std::vector<BuiltJob> built;
  for (const auto& j : jobs) built.push_back(build_job(j, graph, cal));
  std::vector<const JobSpec*> all_jobs;
  std::vector<const BuiltJob*> all_built;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    all_jobs.push_back(&jobs[j]);
    all_built.push_back(&built[j]);
  }
  const Simulation healthy(graph, cal);
  const std::vector<JobTimes> together = run_jobs(healthy, all_jobs, all_built);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobTimes alone = run_jobs(healthy, {&jobs[j]}, {&built[j]}).front();
    JobResult r;
    r.name = jobs[j].name;
    r.placement = jobs[j].placement;
    r.gpus = static_cast<int>(jobs[j].gpus.size());
    std::set<int> trays;
    std::set<std::string> parts;
    for (int gpu : jobs[j].gpus) {
      const Vertex& v = graph.vertices()[graph.gpu_vertex(gpu)];
      trays.insert(v.tray);
      parts.insert(v.domain < 0 ? "(none)" : graph.partitioned() ? graph.partitioning().partitions[v.domain].name
                                                                 : "d" + std::to_string(v.domain));
    }
    r.trays.assign(trays.begin(), trays.end());
    r.partitions.assign(parts.begin(), parts.end());
    r.alone_s = alone.total_s;
    r.together_s = together[j].total_s;
    r.slowdown = relative_change(r.together_s, r.alone_s);
    if (jobs[j].planned) {
      r.step = jobs[j].planned;
      r.collectives.push_back({"compute of a " + jobs[j].step->model + " step (planner: " + jobs[j].planned->layout + ")",
                               "delay", 1, alone.per_collective_s.back(), together[j].per_collective_s.back()});
    }
    for (std::size_t c = 0; c < jobs[j].collectives.size(); ++c) {
      const auto groups = mesh_groups(jobs[j], jobs[j].collectives[c].dim);
      r.collectives.push_back({collective_label(jobs[j].collectives[c], built[j].groups[c],
                                                static_cast<int>(groups.front().size())),
                               built[j].algorithm[c], built[j].groups[c], alone.per_collective_s[c],
                               together[j].per_collective_s[c]});
    }
    out.jobs.push_back(std::move(r));
  }
  // Links more than one job used, busiest first.
  std::map<std::string, SharedLink> shared;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    for (const auto& [name, kb] : together[j].link_bytes) {
      SharedLink& s = shared[name];
      s.name = name;
      s.kind = kb.first;
      s.job_bytes.emplace_back(jobs[j].name, kb.second);
      s.max_utilization = std::max(s.max_utilization, together[j].link_utilization.at(name));
    }
  for (auto& [name, s] : shared)
    if (s.job_bytes.size() > 1) out.shared_links.push_back(s);
  auto total = [](const SharedLink& s) {
    double b = 0;
    for (const auto& jb : s.job_bytes) b += jb.second;
    return b;
  };
  std::stable_sort(out.shared_links.begin(), out.shared_links.end(),
                   [&](const SharedLink& a, const SharedLink& b) { return total(a) > total(b); });
  std::map<int, std::set<std::string>> by_fabric;
  for (const auto& j : jobs)
    for (int gpu : j.gpus) {
      const Vertex& v = graph.vertices()[graph.gpu_vertex(gpu)];
      if (v.domain >= 0 && together[&j - jobs.data()].link_bytes.count(v.name + ".nvlink-port"))
        by_fabric[v.fabric].insert(j.name);
    }
  for (const auto& [f, names] : by_fabric)
    if (names.size() > 1) out.shared_fabrics.push_back({f, std::vector<std::string>(names.begin(), names.end())});

  // Failures while they run.
  std::vector<std::string> items = mix.failures;
  items.insert(items.end(), extra_failures.begin(), extra_failures.end());
  if (items.empty()) return out;
  FailureScenario fs;
  fs.mode = mix.mode;
  for (const auto& i : items) fs.items.push_back(parse_failure_item(i));
  validate_failures(fs, graph);
  const PlatformModel healthy_model(graph, cal, {});
  const PlatformModel failed_model(graph, cal, fs);
  std::vector<JobFootprint> footprints;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    JobFootprint f{jobs[j].name, jobs[j].gpus, {}};
    for (const auto& [name, kb] : together[j].link_bytes) f.links.insert(name);
    footprints.push_back(std::move(f));
  }
  FailureOutcome fo;
  fo.items = items;
  fo.mode = to_string(fs.mode);
  fo.partitions = partition_health(graph, failed_model, healthy_model, fs);
  fo.jobs = job_fates(graph, failed_model, fs, footprints, recovery);
  // The survivors (and jobs restarted at once) together on the failed platform. A job that cannot run
  // there (e.g. its only route is down) dies with the engine's reason.
  const Simulation after(graph, cal, data_path_failures(fs));
  std::vector<std::size_t> running;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (fo.jobs[j].fate != "dies") {
      try {
        run_jobs(after, {&jobs[j]}, {&built[j]});
        running.push_back(j);
      } catch (const SimulationError& e) {
        fo.jobs[j].fate = "dies";
        fo.jobs[j].reason += (fo.jobs[j].reason.empty() ? "" : "; ") + std::string(e.what());
        fo.jobs[j].back_after_s = recovery.hardware_repair.seconds + recovery.restart.seconds;
        fo.jobs[j].back_after = "repair (" + recovery.hardware_repair.source + "), then restart";
      }
    }
  std::vector<const JobSpec*> rj;
  std::vector<const BuiltJob*> rb;
  for (std::size_t j : running) {
    rj.push_back(&jobs[j]);
    rb.push_back(&built[j]);
  }
  const std::vector<JobTimes> after_times = rj.empty() ? std::vector<JobTimes>{} : run_jobs(after, rj, rb);
  for (std::size_t k = 0; k < running.size(); ++k) {
    JobFate& f = fo.jobs[running[k]];
    f.time_after_s = after_times[k].total_s;
    const double before = out.jobs[running[k]].together_s;
    f.slowdown_after = relative_change(f.time_after_s, before);
  }
  out.failure = std::move(fo);
  return out;
}

}  // namespace racksim
