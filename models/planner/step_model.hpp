#pragma once
// The time of one training step for one layout, and the memory each GPU needs. What it counts:
//  * compute per micro-batch and pipeline stage: every GEMM of every layer (gpu_compute.hpp), the
//    attention core, memory-bound elementwise work; backward = 2x GEMMs, 2.5x attention; recompute;
//  * TP all-gather/reduce-scatter pairs per layer (sequence parallel), EP all-to-all dispatch + combine
//    per MoE layer scaled by the routing imbalance, CP ring K/V exchange overlapped with attention;
//    TP and EP exposed except for the overlap fractions given;
//  * the pipeline: m x T_max + (p - 1) x T_mean / v (1F1B v = 1; interleaved v chunks), and the
//    send/recv of activations on the fill and drain;
//  * DP / ZeRO gradient reduce-scatter (all-reduce for ZeRO-0) overlapped with the last micro-batch's
//    backward, the parameter all-gather overlapped with the next step's first forward (ZeRO-3: per
//    micro-batch); the optimizer step (HBM-bound); offload traffic over C2C.
// Every collective is priced by CommCost on the real GPUs of the group (rank 0's group).
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/planner/layout.hpp"
#include "models/workload/memory_fit.hpp"
#include "models/workload/model_spec.hpp"

namespace racksim {

class CommCost;
class RankPlacement;
class TopologyGraph;
struct GpuCompute;

// What the user fixes about the job, besides the layout.
struct TrainingJob {
  int global_batch = 0;          // sequences per step
  int seq_len = 0;               // tokens per sequence
  std::string dtype = "bf16";    // GEMM precision (gpu_compute.json): bf16 or fp8
  double moe_imbalance = 1.2;    // tokens on the busiest EP rank / mean (assumption; see docs/planner.md)
  double tp_overlap = 0;         // fraction of TP communication hidden behind compute
  double ep_overlap = 0;         // fraction of EP all-to-all hidden behind compute (DualPipe-style)
  double grad_bytes = 4;         // gradient element: fp32 accumulation and reduction
  double memory_reserve = 0.10;  // HBM fraction kept for CUDA context, NCCL buffers, fragmentation
};

// The hardware side, read once per system.
struct SystemContext {
  std::string system_id;
  const TopologyGraph* graph = nullptr;
  const GpuCompute* compute = nullptr;
  double hbm_bytes = 0;           // per GPU, from the topology file
  double hbm_Bps = 0;
  double host_bytes_per_gpu = 0;  // CPU memory per GPU (offload capacity)
  double c2c_Bps_per_gpu = 0;     // GPU <-> host bandwidth per GPU per direction when all GPUs offload
  std::string host_link;          // "c2c", "pcie"
  // offload streaming seconds per (optimizer params, activation bytes) per GPU, filled as asked
  std::shared_ptr<std::map<std::pair<double, double>, double>> offload_streaming =
      std::make_shared<std::map<std::pair<double, double>, double>>();
};
SystemContext make_system_context(const TopologyGraph& graph, const GpuCompute& compute);

struct CommTime {
  std::string kind;        // "tp", "ep", "cp", "pp", "dp"
  std::string what;        // "all-gather + reduce-scatter per layer", ...
  double total_s = 0;      // per step, on the bottleneck stage's GPU
  double exposed_s = 0;    // the part that adds to the step time
  double bytes = 0;        // one collective's payload (nccl-tests convention)
  int group = 1;           // GPUs in the group
  int domains = 1;         // fast domains the group spans
  std::string algorithm;   // what the collective model picked
};

struct StepEstimate {
  double step_s = 0;
  double compute_s = 0;          // m x bottleneck stage compute (forward + backward)
  double recompute_s = 0;        // part of compute_s spent recomputing
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;          // exposed C2C/PCIe offload traffic
  std::vector<CommTime> comm;
  double comm_total_s = 0, comm_exposed_s = 0;
  double tokens_per_s = 0, tokens_per_s_per_gpu = 0;
  double mfu = 0;                // model FLOPs / (step x GPUs x dense peak of the dtype)
  MemoryBreakdown memory;        // the fullest stage
  int memory_stage = 0;
  double memory_capacity = 0;    // usable HBM per GPU
  int bottleneck_stage = 0;
  std::vector<double> stage_times;  // per micro-batch: forward + backward + exposed TP/EP/CP, per stage
  double comm_exposed(const std::string& kind) const;
};

// Layers of each pipeline stage: contiguous, the first L mod p stages one layer more.
std::vector<StageSlice> stage_slices(const ModelSpec& model, int pp);

// Memory of the fullest stage; `stage` receives its index.
MemoryBreakdown layout_memory(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& layout, int* stage = nullptr);
bool fits(const MemoryBreakdown& memory, const TrainingJob& job, const SystemContext& system);

// A lower bound of estimate_step's step time from compute alone (no communication, no optimizer):
// the search's pre-screen, evaluated without touching the collective model.
double step_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& system, const ParallelLayout& layout);

// The communication groups of a layout (the slowest group of each kind), as CommCost group ids. They
// depend only on the degrees and the mesh order: a search computes them once for all micro-batchings.
struct GroupSpan {
  int id = -1;          // CommCost group
  int size = 1;
  int domains = 1;      // fast domains spanned
  int inner = -1;       // two-level form: the members in the first domain (-1 when not applicable)
  int outer = -1;       // and one member per domain
};
struct MeshGroups {
  GroupSpan tp, ep, cp_pair, pp_pair, pp, cp, dense_dp, expert_dp;
};
MeshGroups mesh_groups(const RankPlacement& placement, const ParallelLayout& layout, CommCost& comm);

StepEstimate estimate_step(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                           const RankPlacement& placement, const ParallelLayout& layout, CommCost& comm,
                           const MeshGroups* groups = nullptr);

}  // namespace racksim
