#include "models/analytic/analytic_model.hpp"

#include "models/analytic/cost_model.hpp"
#include "models/analytic/flow_cost.hpp"
#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/errors.hpp"

namespace racksim {

// The closed form of cost_model.hpp for the requested algorithm (auto: what NCCL would run,
// nccl_choice.hpp), at the pipeline depth its schedule uses. What it counts, per algorithm, is in
// docs/model.md.
AnalyticEstimate analytic_collective(const TopologyGraph& graph, const CollectiveRequest& request,
                                     const Calibration& calibration) {
  validate_request(request, graph);
  // exec_terms' passes and the cost model price the same routes (a 576-GPU all-to-all: 330 k flows).
  const FlowCacheUnlessActive flows(graph);
  if (request.algorithm != "auto") find_algorithm(request.op, request.algorithm);  // InputError listing the valid names
  const NcclChoice choice = resolve_request(request, graph);
  const CollectiveRequest& r = choice.request;
  const ExecTerms x = exec_terms(graph, r, calibration);
  CostModel model = find_algorithm(r.op, r.algorithm).cost(graph, r, calibration, x.flow);
  model.terms = x.flow;
  model.warnings = x.warnings;
  const int depth = x.depth;
  AnalyticEstimate e;
  e.algorithm = r.algorithm;
  e.protocol = r.protocol;
  e.channels = r.channels;
  e.note = x.note.empty() ? choice.note : choice.note + "; " + x.note;
  e.time_s = model.time(depth);
  e.phases = model.phases(depth);
  e.bandwidth_s = x.bandwidth_s;
  e.qp_connection_bytes = x.qp_connection_bytes;
  e.qp_line_s = x.qp_line_s;
  e.warnings = model.warnings;
  return e;
}

// Seed course, section 7, Fig 4 caption: "Bandwidth-only model with a fixed per-phase latency:
// in-domain ring 2(d-1)/d * S/B_NVL (NVLS ~ S/B_NVL), cross-domain ring on S/d per GPU over that GPU's
// NIC, then in-domain all-gather (folded into the ring and NVLS terms)."
//   T = L * phases + [d > 1] * (nvls ? S / B_nvl : 2(d-1)/d * S / B_nvl)
//                  + [D > 1] * 2(D-1)/D * (S/d) / B_nic
// phases: 1 inside one domain (the all-reduce); 3 across domains (reduce-scatter, cross-domain ring,
// all-gather); 0 for a single GPU. (Our reading: the caption does not say how many phases pay L.)
double fig4_allreduce_time_s(const Fig4Inputs& in) {
  const std::string where = "fig4";
  if (!(in.bytes > 0)) throw InputError(where, "/bytes", number_text(in.bytes), "> 0");
  if (in.gpus_per_domain < 1) throw InputError(where, "/gpus_per_domain", std::to_string(in.gpus_per_domain), ">= 1");
  if (in.domains < 1) throw InputError(where, "/domains", std::to_string(in.domains), ">= 1");
  if (in.phase_latency_s < 0) throw InputError(where, "/phase_latency_s", number_text(in.phase_latency_s), ">= 0");
  const double S = in.bytes, d = in.gpus_per_domain, D = in.domains;
  double t = 0;
  int phases = 0;
  if (in.gpus_per_domain > 1) {
    if (!(in.nvlink_Bps > 0)) throw InputError(where, "/nvlink_Bps", number_text(in.nvlink_Bps), "> 0");
    t += in.nvls ? S / in.nvlink_Bps : 2 * (d - 1) / d * S / in.nvlink_Bps;
    phases += in.domains > 1 ? 2 : 1;
  }
  if (in.domains > 1) {
    if (!(in.nic_Bps > 0)) throw InputError(where, "/nic_Bps", number_text(in.nic_Bps), "> 0");
    t += 2 * (D - 1) / D * (S / d) / in.nic_Bps;
    phases += 1;
  }
  return t + phases * in.phase_latency_s;
}

}  // namespace racksim
