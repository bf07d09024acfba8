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
  std::string s = "tp=" + std::to_string(tp) + " cp=" + std::to_string(cp) + " pp=" + std::to_string(pp) +
                  " dp=" + std::to_string(dp);
  if (ep > 1 || etp > 1) s += " ep=" + std::to_string(ep) + " etp=" + std::to_string(etp);
  if (virtual_stages > 1) s += " vp=" + std::to_string(virtual_stages);
  return s;
}

std::string ParallelLayout::mesh() const {
  std::string out;
  for (MeshDim d : order) {
    if (size(d) == 1) continue;
    out += (out.empty() ? "" : ", ") + std::string(to_string(d)) + "=" + std::to_string(size(d));
  }
  out = "(" + out + ")";
  if (ep > 1 || etp > 1) {
    // the expert view: pp where the attention view has it, then edp, ep, etp
    std::string e;
    auto add = [&](const char* n, int v) {
      if (v > 1) e += (e.empty() ? "" : ", ") + std::string(n) + "=" + std::to_string(v);
    };
    if (pp_outermost()) add("pp", pp);
    add("edp", edp());
    if (!pp_outermost()) add("pp", pp);
    add("ep", ep);
    add("etp", etp);
    out += " experts (" + e + ")";
  }
  return out;
}

std::string ParallelLayout::fsdp_text() const {
  if (zero_stage < 3) return "ZeRO-" + std::to_string(zero_stage);
  return shard_group > 0 ? "HSDP(" + std::to_string(shard_group) + ")" : "FSDP";
}

std::string ParallelLayout::key() const {
  std::string k = degrees() + " mb=" + std::to_string(micro_batch) + " " + to_string(schedule);
  k += " mesh=" + mesh() + " " + fsdp_text() + " recompute=" + recompute.text();
  if (offload_optimizer) k += " offload-opt";
  if (offload_activations) k += " offload-act";
  if (!pp_layout.empty()) k += " pp-layout=" + pp_layout;
  return k;
}

}  // namespace racksim
