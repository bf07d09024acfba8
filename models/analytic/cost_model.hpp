#pragma once
// The analytic model of one algorithm on one request, as a pipeline: items (pipeline chunks, or blocks
// for hierarchical) pass through stages in order; a stage's time for one item is the alpha-beta time of
// its concurrent flows (flow_cost.hpp) times its sequential sub-steps (ring steps). With k items
//     T(k) = launch + sum_i t_i + (k - 1) * cycle,
//     cycle = max(max_i t_i, max over port-sharing groups of the sum of their link occupancy (bytes /
//             bandwidth, no latency), max over steady flow sets of t),
// the makespan of a flow shop of identical items, where stages that use the same GPU ports (the ring
// reduce-scatter and all-gather of a hierarchical block) cannot overlap each other's traffic (their
// latencies can), and a full tree pipeline has every level's flows on the ports at once.
// Algorithms use the same model with calibration none to pick their default pipeline depth, so the
// schedule and the analytic estimate agree on chunking.
#include <memory>
#include <string>
#include <vector>

#include "models/analytic/flow_cost.hpp"
#include "sim/core/thread_scope.hpp"
#include "models/collectives/collective.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class TopologyGraph;

struct StageModel {
  std::string phase;
  StageCost cost;           // time of one item's flows as a function of the bytes each flow carries
  double bytes = 0;         // bytes per flow for the whole collective; one item carries bytes / k
  int repeats = 1;          // sequential identical steps per item (ring steps)
  // Seconds per flow byte the switch plane spends reducing before it sends (the engine's switch-plane
  // reduce, at the summed port bandwidth of the domain's GPUs), 0 elsewhere.
  double reduce_s_per_byte = 0;
  // true: the stage's items leave one after another (a stream: its latency is paid per item); false:
  // an item goes as soon as its data is there, so only the links' occupancy bounds the cycle.
  bool serial = true;
  // Latency paid once per stage rather than per repeat: the steps of a ring that cross a NIC, whose extra
  // latency the ring's pipelined steps pay once each along the chain (tuning.cc:376-377).
  double once_s = 0;
  double time(double item_bytes) const {
    return repeats * (cost.time(item_bytes) + item_bytes * reduce_s_per_byte) + once_s;
  }
  double occupancy(double item_bytes) const;
};

struct CostModel {
  std::string algorithm;                   // full name, "all_reduce/nvls"
  double launch_s = 0;
  std::vector<StageModel> stages;
  std::vector<std::vector<int>> shared;    // stage groups that share ports
  std::vector<StageModel> steady;          // flow sets active together once the pipeline is full (all
                                           // levels of a tree): each bounds the cycle from below
  bool pipelined = true;                   // false: depth only splits pieces that travel together (ring)
  bool pipeline_on_request = false;        // true: depth 1 unless --chunk-bytes asks (hierarchical)
  // Hierarchical with NVLS inside and several domains: the blocks do not form a plain flow shop (a
  // block's multicast waits for the next block's scatter; the all-gather's small up-transfer shares the
  // port with the next block's reduce-scatter), so time() follows the schedule block by block
  // (hierarchical_timeline in cost_model.cpp). Stage indices: rs_up, rs_down, outer [first, last],
  // ag_up, ag_down; -1 when unused.
  struct NvlsBlocks {
    int rs_up = -1, rs_down = -1, outer_first = -1, outer_last = -1, ag_up = -1, ag_down = -1;
  };
  NvlsBlocks nvls_blocks;
  double unit_bytes = 0;                   // the stream --chunk-bytes cuts: depth = ceil(unit / chunk)
  long tasks_fixed = 0, tasks_per_item = 0;
  // Transfers: one per (task, destination), what the engine pays for (a multicast to n-1 GPUs is n-1
  // comms). Default pipelining stays within `transfer_budget` of them.
  long transfers_fixed = 0, transfers_per_item = 0;
  long transfer_budget = 0;
  std::string detail;                      // what was planned (inner/outer algorithms, tree height)
  FlowTerms terms;                         // NCCL protocol terms and calibration it was built with
  std::vector<std::string> warnings;       // calibration borrowed from another architecture

  double stage_time(std::size_t i, int depth) const;
  double time(int depth) const;
  std::vector<PhaseTime> phases(int depth) const;
  long tasks(int depth) const { return tasks_fixed + tasks_per_item * depth; }
  long transfers(int depth) const { return transfers_fixed + transfers_per_item * depth; }
};

// request.algorithm must be a concrete name (not "auto"). InputError when the algorithm cannot run
// on this request and topology (the same checks the schedule builder makes).
CostModel make_cost_model(const TopologyGraph& graph, const CollectiveRequest& request,
                          const Calibration& calibration);

struct DepthChoice {
  int depth = 1;
  // The depth the closed form prices: the chunk's own (NCCL's, once the request is resolved) where the
  // schedule's depth was lowered to stay within kMaxTransfers, else `depth`. The engine cannot afford millions
  // of transfers; a formula can, and a 1 440-GPU tree runs NCCL's 512 KiB chunks, not the 24 MiB pieces that
  // 2 M transfers allow (their fill made 16 GiB 20 % slower than NCCL's chunks do).
  int model_depth = 1;
  long tasks = 0;    // tasks the schedule will have at this depth (for reserving)
  // Where `depth` was lowered below the chunk's own pieces to stay within kMaxTransfers: those pieces (what
  // NCCL runs; the note says "lowered from" it); 0 otherwise. The schedule carries it (Schedule::nccl_chunks).
  long nccl_chunks = 0;
  std::string note;  // what was chosen and why (empty for the plain default of depth 1)
};
// The pipeline depth for a request: from request.chunk_bytes when set (lowered to fit kMaxTransfers),
// else the depth minimising the nominal model's time among those within the transfer budget (ties: the
// smaller depth).
DepthChoice choose_depth(const CostModel& nominal, const CollectiveRequest& request);
// choose_depth on the calibration-none model: what the schedule builders use.
DepthChoice planned_depth(const TopologyGraph& graph, const CollectiveRequest& request);

// The calibration-none model of a request and its planned depth. Building one schedule asks for them
// three times (the size check, the builder, exec_terms), and each prices every flow of the collective:
// 5 s a time at 100 008 GPUs (issue 14). While a NominalPlan::Scope lives on this thread (build_schedule
// holds one), the plan of the latest request asked for is kept and given again for the same graph and an
// equal request; without a scope nothing is kept.
struct NominalPlan {
  CostModel model;
  DepthChoice depth;

  struct Memo {
    const TopologyGraph* graph = nullptr;
    CollectiveRequest request;
    std::unique_ptr<NominalPlan> plan;
  };
  using Scope = ThreadScope<Memo>;
};
const NominalPlan& nominal_plan(const TopologyGraph& graph, const CollectiveRequest& request, NominalPlan& own);

}  // namespace racksim
