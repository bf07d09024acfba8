#include "models/planner/layout.hpp"

namespace racksim {

const char* to_string(MeshDim dim) {
  switch (dim) {
    case MeshDim::pp: return "pp";
    case MeshDim::dp: return "dp";
    case MeshDim::ep: return "ep";
    case MeshDim::cp: return "cp";
    case MeshDim::tp: return "tp";
  }
  return "?";
}

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::none: return "none";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved";
  }
  return "?";
}

int ParallelLayout::size(MeshDim dim) const {
  switch (dim) {
    case MeshDim::pp: return pp;
    case MeshDim::dp: return dp;
    case MeshDim::ep: return ep;
    case MeshDim::cp: return cp;
    case MeshDim::tp: return tp;
  }
  return 1;
}

std::string ParallelLayout::degrees() const {
  return "tp=" + std::to_string(tp) + " ep=" + std::to_string(ep) + " cp=" + std::to_string(cp) +
         " pp=" + std::to_string(pp) + " dp=" + std::to_string(dp);
}

std::string ParallelLayout::mesh() const {
  std::string out;
  for (MeshDim d : order) {
    if (size(d) == 1) continue;
    out += (out.empty() ? "" : ", ") + std::string(to_string(d)) + "=" + std::to_string(size(d));
  }
  return "(" + out + ")";
}

std::string ParallelLayout::key() const {
  std::string k = degrees() + " mb=" + std::to_string(micro_batch) + " " + to_string(schedule);
  if (schedule == PipelineSchedule::interleaved) k += "x" + std::to_string(virtual_stages);
  k += " mesh=" + mesh() + " zero=" + std::to_string(zero_stage) + " recompute=" + to_string(recompute);
  if (offload_optimizer) k += " offload-opt";
  if (offload_activations) k += " offload-act";
  return k;
}

}  // namespace racksim
