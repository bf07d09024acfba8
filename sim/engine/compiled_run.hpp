#pragma once
// A run compiled for the engine process: every schedule's tasks flattened into a few contiguous arrays
// (dependency counts, successors, transfers with their routes, payloads), built in the caller's process
// where the schedules are already in cache. The forked engine process then reads only these arrays: on
// virtual machines every page a fresh process first touches costs a trap (27 us per 4 KiB page measured
// on the dev VM), and a schedule of small scattered vectors spans thousands of pages.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/schedule.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {

struct CompiledSchedule {
  const Schedule* schedule = nullptr;    // for names (phases, algorithm) in the results
  int first = 0, count = 0;              // its tasks are [first, first + count); its launch task is first + count
  double efficiency = 1;                 // the algorithm's bandwidth efficiency at this size
  double nic_efficiency = 1;             // ... for a transfer whose route crosses a NIC (ExecParams::nic_efficiency)
  double launch_delay_s = 0, step_delay_s = 0;
  std::vector<int> hosts_of_rank;
  std::vector<std::pair<int, double>> link_bytes;  // (link, bytes this schedule put on it), by link
};

struct CompiledRun {
  std::vector<CompiledSchedule> schedules;
  // Per task (all schedules, then one launch task per schedule at first + count).
  std::vector<int> task_schedule;
  std::vector<int> pending;              // dependencies to wait for (roots wait for their launch task)
  std::vector<int> succ_offset, succ;    // successors of t: succ[succ_offset[t] .. succ_offset[t + 1])
  std::vector<int> part_offset;          // transfers of t: part_route[part_offset[t] .. part_offset[t + 1])
  std::vector<int> part_route;           // index into the routes below (a multicast is one part)
  std::vector<int> part_rank;            // destination rank of the part (-1: a multicast or a switch plane)
  std::vector<double> payload;           // bytes on the wire per part (task bytes / efficiency)
  std::vector<double> task_bytes;
  std::vector<std::uint8_t> flags;       // kSwitchReduce, kReduce
  std::vector<int> phase;                // -1 for launch tasks
  std::vector<double> task_delay_s;      // before the task's transfer starts (protocol step latency beyond the wire's)
  // Distinct routes used, in first-use order.
  std::vector<int> route_src, route_dst;  // hosts (dst may be a multicast group)
  std::vector<int> route_link_offset;     // links of route r: route_links[offset[r] .. offset[r + 1])
  std::vector<LinkUse> route_links;
  std::vector<double> route_latency_s;
  // True when every route has the same latency: SimGrid then waits it itself (its per-flow weight, the
  // route latency, is the same for all, so sharing stays fair), saving a timer per transfer.
  bool latency_in_routes = true;
  std::vector<int> hosts, links;          // what the engine process builds
  std::vector<PlatformHost> host_info;    // per entry of `hosts`: copied so that the engine process never
                                          // takes the model's memo lock (a fork may have copied it held)

  // Exact aggregation (aggregation.hpp): in a quotient run, tasks, parts and routes stand for classes of a
  // full run's copies; `schedules` keep the full run's numbering (first, count) and its per-link bytes, and
  // `classes` maps the full run onto this one so that results name every task and link.
  struct Classes {
    int full_tasks = 0;
    std::vector<int> task_class;         // full task -> task of this run
    std::vector<int> directed_link_rep;  // 2 * link + up -> the directed link (same encoding) whose activity
                                         // stands for it; -1 where the run never uses it
  };
  std::shared_ptr<const Classes> classes;  // null: a full run
  // SimGrid's endpoints of route r where two quotient routes join the same hosts (SimGrid routes by host
  // pair): alias hosts. Empty: route_src / route_dst.
  std::vector<int> route_comm_src, route_comm_dst;
  // Where route r's executions run (an in-switch reduction at its source, a GPU reduction at its
  // destination): in a quotient run the representative host of the class. Empty: route_src / route_dst.
  std::vector<int> route_exec_src, route_exec_dst;
  int exec_src(int r) const { return route_exec_src.empty() ? route_src[r] : route_exec_src[r]; }
  int exec_dst(int r) const { return route_exec_dst.empty() ? route_dst[r] : route_exec_dst[r]; }
  std::string engine_note;                 // a full run: why it was not aggregated
  int task_of_full(int t) const { return classes ? classes->task_class[t] : t; }

  static constexpr std::uint8_t kSwitchReduce = 1;  // the plane reduces before sending
  static constexpr std::uint8_t kReduce = 2;        // the receiver combines the data
  int tasks() const { return static_cast<int>(task_schedule.size()); }
  bool is_launch(int t) const { return phase[t] < 0; }
  // The heap this run holds (its vectors' capacities; the schedules it points to are not its own): what a
  // caller preparing runs ahead of their engine processes keeps in memory (engine_process.hpp).
  std::size_t memory_bytes() const;
};

// Validates the schedules (InputError naming the task), checks that no rank is on a failed tray and no
// transfer crosses a failed link (SimulationError naming them), and flattens them. `rank_hosts`, when
// given, maps each schedule's ranks to hosts instead of request.gpus (device-level transfers). A schedule listed
// by its symmetry (Schedule::symmetry) compiles into its quotient run (symmetric_run.hpp) and must run alone.
// `after`, when given, holds per schedule the earlier schedules whose completion launches it (none:
// launched at time 0): a job's collectives run back to back (Simulation::run_after).
// The platform hosts of a schedule's ranks (its request's GPUs): InputError for a GPU outside the topology,
// SimulationError for one a failure took out (naming the tray).
std::vector<int> hosts_of_ranks(const PlatformModel& model, const Schedule& s);

CompiledRun compile_run(const PlatformModel& model, const Calibration& calibration,
                        const std::vector<const Schedule*>& schedules,
                        const std::vector<std::vector<int>>* rank_hosts = nullptr,
                        const std::vector<std::vector<int>>* after = nullptr);
// compile_run's work on the tasks as listed: a symmetric schedule's (Schedule::symmetry) one per orbit, each as if
// it were alone (compile_symmetric starts from it); compile_run for any other.
CompiledRun compile_listed(const PlatformModel& model, const Calibration& calibration,
                           const std::vector<const Schedule*>& schedules,
                           const std::vector<std::vector<int>>* rank_hosts = nullptr,
                           const std::vector<std::vector<int>>* after = nullptr);

}  // namespace racksim
