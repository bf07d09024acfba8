#pragma once
// ParallelLayout: one way to run a training job as Megatron-Core does. Attention (and dense) layers use
// TP x CP x PP x DP = GPUs; MoE layers fold expert parallelism into the same ranks: inside each pipeline
// stage the TP x CP x DP ranks regroup as ETP x EP x EDP (EP x ETP x EDP = TP x CP x DP), so EP does not
// multiply the GPU count. VP is the virtual-pipeline degree (interleaved 1F1B when > 1). The mesh order
// is one of Megatron's two rank orders: tp-cp-dp-pp (PP outermost, the default) or tp-cp-pp-dp
// (--use-tp-pp-dp-mapping, DP outermost); expert groups take consecutive TP-CP-DP indices.
#include <string>
#include <vector>

#include "models/workload/layer_work.hpp"

namespace racksim {

enum class MeshDim { pp, dp, ep, cp, tp };
const char* to_string(MeshDim dim);

enum class PipelineSchedule { none, one_f_one_b, interleaved };
const char* to_string(PipelineSchedule schedule);

struct ParallelLayout {
  int tp = 1, cp = 1, pp = 1, dp = 1;  // attention: GPUs = tp x cp x pp x dp
  int ep = 1, etp = 1;                 // MoE layers: ep x etp x edp = tp x cp x dp
  int micro_batch = 1;                 // sequences per micro-batch
  int micro_batches = 1;               // per step, per pipeline (global batch / (dp x micro_batch))
  PipelineSchedule schedule = PipelineSchedule::none;
  int virtual_stages = 1;              // VP: model chunks per GPU (interleaved when > 1)
  std::vector<MeshDim> order{MeshDim::pp, MeshDim::dp, MeshDim::cp, MeshDim::tp};  // outermost first
  int zero_stage = 1;                  // 0-3 (1: Megatron's distributed optimizer; 3: Megatron FSDP)
  int shard_group = 0;                 // ZeRO-3: HSDP shard group (DP x CP ranks; 0 = all: plain FSDP)
  RecomputePlan recompute;
  // How the layers split into the PP x VP chunks: "" = the planner's split balanced by time (what the
  // search prices; Megatron runs it through --pipeline-model-parallel-layout, which the report prints);
  // "uniform" = Megatron's default (the same number of layers per chunk, counting the embedding and the
  // loss as a layer each where that makes the count divide; balanced when nothing divides); else a
  // Megatron layout string ("Et*4|(t*4|)*14tmL": E embedding, t decoder layer, m MTP, L loss, '|'
  // between chunks in virtual-stage order).
  std::string pp_layout;
  bool offload_optimizer = false;
  bool offload_activations = false;

  int gpus() const { return tp * cp * pp * dp; }
  int edp() const { return tp * cp * dp / (ep * etp); }
  int size(MeshDim dim) const;         // ep: the EP degree (not a dimension of the attention mesh)
  bool pp_outermost() const { return order.front() == MeshDim::pp || pp == 1; }
  // "tp=1 cp=1 pp=8 dp=32 ep=32 etp=1"
  std::string degrees() const;
  // The DeviceMesh of the attention view, outermost first, dimensions of size 1 left out, and the
  // expert view when it differs: "(pp=8, dp=32) experts (pp=8, ep=32)"; "()" for one GPU.
  std::string mesh() const;
  // Everything that tells two layouts apart, for sorting and logs.
  std::string key() const;
  std::string fsdp_text() const;       // "ZeRO-1", "FSDP", "HSDP(8)", ...
};

}  // namespace racksim
