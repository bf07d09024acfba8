#pragma once
// The time of one training step for one layout, and the memory each GPU needs. What it counts, per
// micro-batch and pipeline chunk, on one GPU (models/workload/layer_work.hpp for the work of a layer):
//  * compute: every GEMM at the precision recipe's tensor-core rate (the LM head and router in bf16),
//    grouped expert GEMMs, the attention core, the Mamba-2 scan, elementwise and quantisation traffic,
//    a fixed cost per GEMM launch, per layer block and per MoE block; backward = 2x GEMMs, 2.5x
//    attention, 2x the rest; selective or full recompute adds the recomputed forward work;
//  * TP/ETP sequence-parallel all-gathers and reduce-scatters (the exposed fraction fitted), the MoE
//    dispatch and combine over the folded EP group (alltoall or DeepEP/HybridEP, exposed unless the
//    recipe overlaps it), CP ring K/V exchange overlapped with attention;
//  * the pipeline: layers split into PP x VP contiguous chunks balanced by their time (embedding on the
//    first, LM head and MTP on the last), GPU s holding chunks s, s + PP, ...; step = m x T_max +
//    (PP - 1) x T_mean / VP, plus the send/recv of activations on the critical path;
//  * data parallelism (dense parameters over DP x CP, routed experts over EDP): ZeRO-1/2 reduce-scatter
//    and all-gather overlapped with the last backward and the next forward, ZeRO-3 / FSDP / HSDP per
//    micro-batch; the optimizer step (HBM-bound); offload traffic over C2C or PCIe.
// The whole step is a Work (compute_model.hpp): linear in the fitted compute parameters.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/planner/comm_cost.hpp"
#include "models/planner/layout.hpp"
#include "models/workload/compute_model.hpp"
#include "models/workload/gpu_compute.hpp"
#include "models/workload/memory_fit.hpp"
#include "models/workload/model_spec.hpp"

namespace racksim {

class RankPlacement;
class TopologyGraph;

// What the user fixes about the job, besides the layout.
struct TrainingJob {
  int global_batch = 0;          // sequences per step
  int seq_len = 0;               // tokens per sequence
  PrecisionRecipe precision;     // gpu_compute.json's recipe (bf16 when unset)
  double moe_imbalance = 1.2;    // tokens on the busiest EP rank / mean (1 = force-balanced routing)
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  bool ep_overlap = false;       // the recipe overlaps the EP all-to-all with computation (Megatron's a2a overlap)
  bool mtp = true;               // train the model's multi-token-prediction modules, if it has any
  double grad_bytes = 4;         // gradient element: fp32 accumulation and reduction
  double memory_reserve = 0.10;  // HBM fraction kept for CUDA context, NCCL buffers, fragmentation
  TrainingJob() { precision.id = "bf16", precision.gemm_dtype = "bf16", precision.name = "BF16"; }
};

// The hardware side, read once per system.
struct SystemContext {
  std::string system_id;
  const TopologyGraph* graph = nullptr;
  std::shared_ptr<const ComputeModel> compute;
  double hbm_bytes = 0;           // per GPU, from the topology file
  double hbm_Bps = 0;
  double host_bytes_per_gpu = 0;  // CPU memory per GPU (offload capacity)
  double host_memory_Bps_per_gpu = 0;  // the tray's CPU memory bandwidth over its GPUs (a CPU-side optimizer's share)
  double c2c_Bps_per_gpu = 0;     // GPU <-> host bandwidth per GPU per direction when all GPUs offload
  std::string host_link;          // "c2c", "pcie"
  // Offload streaming seconds per (optimizer params, activation bytes) per GPU, filled as asked. Shared by the
  // copies of the context and by searches that run at once on one system (run_plan's degraded systems, on
  // the comparison's threads), hence its lock: two of them filling it together corrupted the map (a crash or
  // a hang in Plan.TrayFailureOnAFullRack about one run in a hundred).
  struct OffloadMemo {
    std::mutex mutex;
    std::map<std::pair<double, double>, double> seconds;
  };
  std::shared_ptr<OffloadMemo> offload_streaming = std::make_shared<OffloadMemo>();
};
SystemContext make_system_context(const TopologyGraph& graph, const GpuCompute& gpu, const ComputeParams& params);
// The system's GPU from `table` with its generation's fitted parameters.
SystemContext make_system_context(const TopologyGraph& graph, const ComputeTable& table);

struct CommTime {
  std::string kind;        // "tp", "ep", "cp", "pp", "dp"
  std::string what;        // "all-gather + reduce-scatter per layer", ...
  double total_s = 0;      // per step, on the bottleneck stage's GPU
  double exposed_s = 0;    // the part that adds to the step time
  double bytes = 0;        // one collective's payload (nccl-tests convention)
  int group = 1;           // GPUs in the group
  int domains = 1;         // fast domains the group spans
  std::string algorithm;   // what the collective model picked
  // Computation lost while the hidden part runs: its kernels hold SMs (NCCL: one per channel; DeepEP and
  // HybridEP: their SM budget) that the overlapped computation then lacks. Part of the step time.
  double contention_s = 0;
};

struct StepEstimate {
  double step_s = 0;
  Work work;                     // step_s = compute.time_s(work)
  double compute_s = 0;          // m x bottleneck stage compute (forward + backward, recompute included)
  double recompute_s = 0;        // part of compute_s spent recomputing
  double overhead_s = 0;         // part of compute_s that is launch / per-block overhead
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;          // exposed C2C/PCIe offload traffic
  std::vector<CommTime> comm;
  double comm_total_s = 0, comm_exposed_s = 0;
  double contention_s = 0;       // sum of the comm's contention_s
  double tokens_per_s = 0, tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // model FLOPs (no recompute, no MTP) / step / GPUs
  double mfu = 0;                // of the dense peak of the recipe's GEMM type
  MemoryBreakdown memory;        // the fullest stage
  int memory_stage = 0;
  double memory_capacity = 0;    // usable HBM per GPU
  bool fits = true;
  int bottleneck_stage = 0;
  std::vector<double> stage_times;      // per micro-batch: forward + backward + exposed TP/EP/CP, per stage
  std::vector<int> stage_layers;        // layers per pipeline GPU (all its chunks)
  std::string pp_layout;                // the chunks as Megatron's --pipeline-model-parallel-layout ("" for PP = 1)
  double comm_exposed(const std::string& kind) const;
};

// Layers of each pipeline chunk (PP x VP of them, in model order), as layout.pp_layout says: by default
// contiguous, balanced by each layer type's compute time on `system` without recompute (the embedding on
// the first, the LM head and MTP on the last chunk), every chunk at least one layer; "uniform" or a
// Megatron layout string as Megatron splits them. GPU s holds chunks s, s + PP, s + 2 PP, ...
// Throws std::invalid_argument when a layout string does not match the model or PP x VP.
std::vector<StageSlice> pipeline_chunks(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                                        const ParallelLayout& layout);
std::vector<StageSlice> chunks_of_stage(const std::vector<StageSlice>& chunks, int pp, int stage);
// The same chunks in place, for a loop over them (the bounds visit every stage of every candidate layout:
// copying them was the search's most frequent allocation); chunks_of_stage copies what this walks.
class StageChunks {
 public:
  StageChunks(const std::vector<StageSlice>& chunks, int pp, int stage)
      : chunks_(&chunks), stride_(static_cast<std::size_t>(pp)), first_(static_cast<std::size_t>(stage)) {}
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = StageSlice;
    using difference_type = std::ptrdiff_t;
    using pointer = const StageSlice*;
    using reference = const StageSlice&;
    iterator(const std::vector<StageSlice>* chunks, std::size_t at, std::size_t stride) : chunks_(chunks), at_(at), stride_(stride) {}
    const StageSlice& operator*() const { return (*chunks_)[at_]; }
    iterator& operator++() {
      at_ = std::min(at_ + stride_, chunks_->size());
      return *this;
    }
    iterator operator++(int) {
      iterator was = *this;
      ++*this;
      return was;
    }
    bool operator==(const iterator& o) const { return at_ == o.at_; }
    bool operator!=(const iterator& o) const { return at_ != o.at_; }

   private:
    const std::vector<StageSlice>* chunks_;
    std::size_t at_, stride_;
  };
  iterator begin() const { return {chunks_, std::min(first_, chunks_->size()), stride_}; }
  iterator end() const { return {chunks_, chunks_->size(), stride_}; }

 private:
  const std::vector<StageSlice>* chunks_;
  std::size_t stride_, first_;
};
// Megatron's --pipeline-model-parallel-layout for `chunks` ("Et*4|(t*4|)*14tmL"); "" for a single chunk.
// `mtp_layers`: the MTP modules the last chunk runs (0 when not trained).
std::string megatron_pp_layout(const std::vector<StageSlice>& chunks, int mtp_layers);
// The chunks of a Megatron layout string for `model` in `chunks` chunks; throws std::invalid_argument
// saying what does not match (chunk count, decoder layers, embedding not first, loss not last).
std::vector<StageSlice> parse_pp_layout(const std::string& text, const ModelSpec& model, int chunks);
// Megatron's default split when every chunk holds the same number of layers, counting the embedding and
// the loss as a layer each where needed for the count to divide (account_for_*_in_pipeline_split);
// empty when no such split exists.
std::vector<StageSlice> uniform_pp_chunks(int layers, int chunks);
// The most pipeline chunks (PP x VP) Megatron's split can cut a model into without a layout string: one per layer,
// the embedding and the loss each counted as a layer (Megatron-Bridge's Llama 3.1 405B recipe: PP 16 x VP 8 = 128
// chunks for 126 layers, E|(t|)*126L). A --pp-layout string may place more (MTP modules, 'm').
int pipeline_slots(const ModelSpec& model);

// Memory of the fullest stage; `stage` receives its index. `chunks`: pipeline_chunks of the layout
// (computed when null; they do not depend on the memory savers, so a search passes them once).
MemoryBreakdown layout_memory(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                              const ParallelLayout& layout, int* stage = nullptr, const std::vector<StageSlice>* chunks = nullptr);
bool fits(const MemoryBreakdown& memory, const TrainingJob& job, const SystemContext& system);

// The memory of one layout's fullest stage under many memory-saver choices (ZeRO stage and HSDP group,
// recompute plan, offload modes): the parameter part and the activation part of each distinct stage
// are each computed once, so a search can try every combination cheaply.
class MemoryFitter {
 public:
  MemoryFitter(const ModelSpec& model, const TrainingJob& job, const ParallelLayout& layout, const std::vector<StageSlice>& chunks);
  MemoryFitter(const MemoryFitter&) = delete;  // stage_params_ refers to chunks_
  MemoryFitter& operator=(const MemoryFitter&) = delete;
  MemoryBreakdown worst(int zero_stage, int shard_group, const RecomputePlan& recompute, bool offload_optimizer,
                        bool offload_activations, int* stage = nullptr);

 private:
  const ModelSpec& model_;
  const TrainingJob& job_;
  ParallelLayout layout_;
  std::vector<int> stages_;                      // the first stage of each make-up
  std::vector<std::vector<StageSlice>> chunks_;  // per stage in stages_
  std::vector<StageParams> stage_params_;        // per stage in stages_ (refers to chunks_)
  // What each layer keeps, at the layer shape of every stage: the search's (LayerCostCache), else own.
  std::optional<SavedActivations> own_saved_;
  SavedActivations* saved_ = nullptr;
  using ParamsKey = std::tuple<std::size_t, int, int, bool>;  // (stage, ZeRO stage, shard group, optimizer offload)
  // (stage, recompute granularity, modules, full layers, block method, activation offload)
  using ActivationsKey = std::tuple<std::size_t, Recompute, unsigned, int, bool, bool>;
  std::vector<std::pair<ParamsKey, MemoryBreakdown>> params_;
  std::vector<std::pair<ActivationsKey, MemoryBreakdown>> activations_;
};

// A lower bound of step_lower_bound(model, job, system, layout with no recompute, chunks) for whatever chunks
// pipeline_chunks gives a layout without a --pp-layout string, found without splitting the model: the
// stages' compute times sum to the whole model's at the layout's layer shape (time is linear in work), so
// the busiest stage takes at least the mean. Shared per layer shape through the active LayerCostCache; the
// search orders its layouts by it until it reaches them (search.cpp).
double step_split_free_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& system, const ParallelLayout& layout);

// A lower bound of estimate_step's step time from compute alone (no communication, no optimizer):
// the search's pre-screen, evaluated without touching the collective model. `stage` (if given) gets
// the stage whose computation bounds it, the one comm_lower_bound adds to.
double step_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& system, const ParallelLayout& layout,
                        const std::vector<StageSlice>* chunks = nullptr, int* stage = nullptr);

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
  GroupSpan tp, cp, cp_pair, pp, pp_pair, dense_dp, expert_dp, ep, etp, shard, expert_shard;
};
MeshGroups mesh_groups(const RankPlacement& placement, const ParallelLayout& layout, CommCost& comm);

// What communication adds at least to step_lower_bound's step on one mesh order (`groups`), over the
// memory choices `choices` (the layout with each ZeRO stage, recompute and offload choice applied): the
// TP, ETP, EP and CP collectives as estimate_step prices them with no recompute (recomputing only repeats
// collectives), of `stage`'s chunks for every micro-batch and of every stage in the bubble; the
// pipeline's transfers; and the least exposed data-parallel time over the choices, each with a window
// no shorter than the step's. For each of those choices, estimate_step >= step_lower_bound (at the least
// recompute, `stage` its bottleneck) + this, because the step's bottleneck stage costs at least `stage`'s
// computation and collectives and its other terms are not negative: the search skips a layout whose sum
// cannot reach its top without pricing it.
double comm_lower_bound(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                        const std::vector<ParallelLayout>& choices, const MeshGroups& groups, CommCost& comm,
                        const std::vector<StageSlice>& chunks, int stage);

StepEstimate estimate_step(const ModelSpec& model, const TrainingJob& job, const SystemContext& system,
                           const RankPlacement& placement, const ParallelLayout& layout, CommCost& comm,
                           const MeshGroups* groups = nullptr, const std::vector<StageSlice>* chunks = nullptr);

}  // namespace racksim
