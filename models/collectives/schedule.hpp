#pragma once
// A Schedule is the plain-data form of one collective: tasks (transfers, with an optional reduction at
// the receiver) and the dependencies between them. Algorithms build Schedules without seeing SimGrid;
// the engine (sim/engine) executes them on the platform, the analytic model and the symbolic checker
// read them too. Schedules dump to JSON and load back (schedule_io.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"

namespace racksim {

// Where a task's data starts or ends: a rank of the request, the NVSwitch plane of an NVLink domain
// (NVLS: the switch reduces what GPUs send it and multicasts results back), or the scale-out fabric of one
// NIC rail (CollNet: the InfiniBand switches reduce what the rail's NICs send them, SHARP, and multicast
// the result back to those NICs).
struct Endpoint {
  enum class Kind { rank, switch_plane, fabric_plane };
  Kind kind = Kind::rank;
  int index = 0;  // rank index into request.gpus, NVLink domain index, or NIC rail
  bool operator==(const Endpoint&) const = default;
  bool is_plane() const { return kind != Kind::rank; }
  static Endpoint rank(int r) { return {Kind::rank, r}; }
  static Endpoint switch_plane(int domain) { return {Kind::switch_plane, domain}; }
  static Endpoint fabric_plane(int rail) { return {Kind::fabric_plane, rail}; }
};

struct Task {
  int id = 0;                     // == position in Schedule::tasks
  Endpoint src;
  std::vector<Endpoint> dsts;     // one destination, or several for a multicast from the switch plane
  std::uint64_t bytes = 0;        // bytes delivered to each destination
  // Symbolic content: which piece of the logical buffer moves. Chunk c of `chunks` pieces of the
  // request's buffer; the layout per op (sizes, owners) is in models/collectives/chunk_layout.hpp
  // (all_to_all: piece src*n + dst).
  int chunk = 0;
  int chunk_count = 1;            // consecutive chunks carried: [chunk, chunk + chunk_count) (added for
                                  // hierarchical phases that move a whole slice in one task)
  bool reduce = false;            // the receiver combines the data with what it holds (else it overwrites)
  std::vector<int> deps;          // task ids that must complete before this one starts (all < id)
  int phase = 0;                  // index into Schedule::phases
};

// How the engine runs a schedule: set by build_schedule from the algorithm's NCCL protocol terms and the
// calibration of the GPU architecture (models/collectives/exec_terms.hpp), so that the engine and the
// algorithm's closed form use the same numbers and a dumped schedule replays the same way. A schedule
// without it (written by hand) takes the calibration's algorithm entry.
struct ExecParams {
  bool set = false;
  double efficiency = 1;    // payload scale: protocol payload fraction x NCCL cap x calibration, in (0, 2]
  double launch_s = 0;      // before the first task
  double intra_step_s = 0;  // NCCL's latency of a step inside a node; the wire's latency is part of it
  double net_step_s = 0;    // the same for a step that crosses the network
  std::string arch;         // GPU architecture whose link calibration applies
  // Pipelined NCCL algorithms (tree, NVLS, NVLS-tree): NCCL's model charges their whole latency once (a
  // hop's latency per stage of the fill), so launch_s holds it and transfers wait no latency of their own;
  // otherwise every step pays intra/net_step_s (rings: their steps are sequential).
  bool latency_at_launch = false;
  // Payload scale of a transfer whose route crosses a NIC: `efficiency` without the calibration's algorithm
  // efficiency (kappa), which is fitted where NVLink binds; the NIC's rate is its own calibration
  // (FlowTerms::kappa, docs/model.md section 7). 0: the same as `efficiency` (schedules written before it).
  // CollNet turns it round: kappa is the fabric's (SHARP's) efficiency, in nic_efficiency and not in
  // `efficiency` (FlowTerms::kappa_on_network).
  double nic_efficiency = 0;
};

// A schedule built as its own quotient (the engine's exact aggregation, issue 14, done by the algorithm instead
// of found by colour refinement over the full schedule): the full collective is the union of the images of the
// listed tasks under `rank_maps`, a group of permutations of the ranks that maps the full schedule onto itself
// and acts freely on its tasks (a rail-aligned flat ring: each ring onto another, racks rotated by two). The
// listed tasks are one per orbit; a task's deps name the orbits of its dependencies by their listed task. The
// engine checks that the topology respects the group (compile_run) before it simulates one task per orbit.
struct ScheduleSymmetry {
  std::vector<std::vector<int>> rank_maps;  // the group's elements, rank -> rank; [0] the identity
  long full_tasks = 0;                      // tasks of the full schedule: listed tasks x rank_maps.size()
  // Per listed task, the mean bytes of its orbit (chunks of a buffer that does not divide differ by a byte);
  // empty: every image carries the listed task's bytes.
  std::vector<double> mean_bytes;
};

struct Schedule {
  CollectiveRequest request;
  std::string algorithm;              // full registry name: "all_reduce/ring"
  int chunks = 1;                     // number of logical buffer pieces used by Task::chunk
  std::vector<std::string> phases;    // e.g. {"reduce-scatter", "all-gather"}
  std::vector<Task> tasks;            // topologically ordered: deps point backwards
  std::string note;                   // what the algorithm chose (auto's pick, inner/outer algorithms)
  std::vector<std::string> warnings;  // results that rest on borrowed or assumed parameters (see docs/model.md)
  ExecParams exec;
  // Where the builder ran the pipeline in fewer pieces than NCCL's chunks to stay within the engine's transfer cap
  // (DepthChoice::nccl_chunks): the pieces it runs and NCCL's chunks; both 0 otherwise. The engine's fill grows
  // with the pieces, which a result then says (note_coarse_pipeline).
  long pipeline_pieces = 0, nccl_chunks = 0;
  // Set: this schedule lists one task per orbit of a symmetry of the full one (ScheduleSymmetry); null: every task.
  std::shared_ptr<const ScheduleSymmetry> symmetry;
};

}  // namespace racksim
