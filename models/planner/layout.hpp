#pragma once
// ParallelLayout: one way to run a training job: the parallel degrees TP x EP x CP x PP x DP = GPUs, the
// micro-batching, the pipeline schedule, the memory savers, and the DeviceMesh order that decides
// which ranks are neighbours (and so which GPUs share a tray, an NVLink domain, a NIC rail).
#include <string>
#include <vector>

#include "models/workload/layer_work.hpp"

namespace racksim {

enum class MeshDim { pp, dp, ep, cp, tp };
const char* to_string(MeshDim dim);

enum class PipelineSchedule { none, one_f_one_b, interleaved };
const char* to_string(PipelineSchedule schedule);

struct ParallelLayout {
  int tp = 1, ep = 1, cp = 1, pp = 1, dp = 1;
  int micro_batch = 1;       // sequences per micro-batch
  int micro_batches = 1;     // per step, per pipeline (global batch / (dp x ep x micro_batch))
  PipelineSchedule schedule = PipelineSchedule::none;
  int virtual_stages = 1;    // interleaved: model chunks per GPU
  std::vector<MeshDim> order{MeshDim::pp, MeshDim::dp, MeshDim::ep, MeshDim::cp, MeshDim::tp};  // outermost first
  int zero_stage = 1;
  Recompute recompute = Recompute::none;
  bool offload_optimizer = false;
  bool offload_activations = false;

  int gpus() const { return tp * ep * cp * pp * dp; }
  int size(MeshDim dim) const;
  // Ranks that process different sequences (attention-side data parallelism): dp x ep.
  int sequence_parallel_ranks() const { return dp * ep; }
  // "tp=1 ep=64 cp=1 pp=1 dp=4"
  std::string degrees() const;
  // The DeviceMesh, outermost first, dimensions of size 1 left out: "(dp=4, ep=64)"; "()" for one GPU.
  std::string mesh() const;
  // Everything that tells two layouts apart, for sorting and logs.
  std::string key() const;
};

}  // namespace racksim
