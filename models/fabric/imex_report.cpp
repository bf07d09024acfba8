#include "models/fabric/imex_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::fabric {

namespace {
double round6(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, 6 - magnitude);
  return std::round(value * scale) / scale;
}
nlohmann::json seconds(double s) { return std::isfinite(s) ? nlohmann::json(round6(s)) : nlohmann::json(nullptr); }
}  // namespace

std::string imex_report_to_json_text(const ImexReport& r) {
  using nlohmann::json;
  const auto& v = r.verdict;
  json checks = json::array();
  for (const auto& c : v.checks) checks.push_back(json{{"name", c.name}, {"command", c.command}, {"ok", c.ok}, {"detail", c.detail}});
  json gpus = json::array();
  for (const auto& g : r.gpus)
    gpus.push_back(json{{"gpu", g.gpu}, {"name", g.name}, {"tray", g.tray}, {"state", g.state}, {"status", g.status},
                        {"cluster_uuid", g.cluster_uuid}, {"clique_id", g.clique_id >= 0 ? json(g.clique_id) : json(nullptr)}});
  json out{{"system", r.system},
           {"racks", r.racks},
           {"job", {{"gpus", r.job.gpus}, {"trays", v.trays}, {"nccl_version", r.job.nccl.version},
                    {"nccl_mnnvl_enable", r.job.nccl.mnnvl_enable}, {"nccl_p2p_disable", r.job.nccl.p2p_disable},
                    {"channel", r.job.channel}, {"bytes", r.job.bytes}}},
           {"imex_domains", r.imex_domains},
           {"partitions", r.partitions},
           {"outcome", v.outcome},
           {"runs", v.runs},
           {"uses_mnnvl", v.uses_mnnvl},
           {"message", v.message},
           {"checks", checks},
           {"failed_checks", v.failed_checks},
           {"nvlink_groups", v.nvlink_groups},
           {"estimate", {{"nvlink_allreduce_s", seconds(v.nvlink_allreduce_s)}, {"ib_allreduce_s", seconds(v.ib_allreduce_s)},
                         {"expected_allreduce_s", seconds(v.expected_allreduce_s)}, {"nvlink_algorithm", v.nvlink_algorithm},
                         {"ib_algorithm", v.ib_algorithm}, {"calibration", v.calibration},
                         {"bandwidth_only_nvlink_s", seconds(v.bw_nvlink_s)}, {"bandwidth_only_ib_s", seconds(v.bw_ib_s)},
                         {"note", v.estimate_note}}},
           {"gpus", gpus}};
  if (r.share) {
    json steps = json::array();
    for (const auto& s : r.share->steps) steps.push_back(json{{"step", s.step}, {"how", s.how}, {"authority", s.authority}});
    out["share"] = json{{"exporter_gpu", r.share_exporter}, {"importer_gpu", r.share_importer}, {"ok", r.share->ok},
                        {"handle", r.share->handle}, {"handle_bytes", r.share->handle_bytes}, {"steps", steps},
                        {"reason", r.share->reason}};
  }
  return dump_json(out, 2) + "\n";
}

std::string imex_report_to_text(const ImexReport& r) {
  const auto& v = r.verdict;
  std::string trays;
  for (int t : v.trays) trays += (trays.empty() ? "" : ",") + std::to_string(t);
  std::string s = fmt::format("{} x{} {}(s): job of {} GPU(s) on tray(s) {}, NCCL {} (NCCL_MNNVL_ENABLE={}{})\n", r.system, r.racks, r.rack_unit,
                              r.job.gpus.size(), trays, r.job.nccl.version, r.job.nccl.mnnvl_enable,
                              r.job.nccl.p2p_disable ? ", NCCL_P2P_DISABLE=1" : "");
  for (const auto& c : v.checks) s += fmt::format("  [{}] {:<13} {}  ({})\n", c.ok ? " ok " : "FAIL", c.name, c.detail, c.command);
  s += fmt::format("=> {}: {}\n", v.outcome, v.message);
  if (std::isfinite(v.expected_allreduce_s) && v.runs)
    s += fmt::format("   all_reduce of {}: {:.4f} s expected (with MNNVL {:.4f} s, without {:.4f} s)\n",
                     units::format_bytes(r.job.bytes), v.expected_allreduce_s, v.nvlink_allreduce_s, v.ib_allreduce_s);
  s += "   " + v.estimate_note + "\n";
  s += "  GPU fabric (nvidia-smi -q):\n";
  for (const auto& g : r.gpus)
    s += fmt::format("    {:<14} tray {:<3} State {:<12} Status {:<9} ClusterUUID {:<24} CliqueId {}\n", g.name, g.tray, g.state,
                     g.status, g.cluster_uuid.empty() ? "N/A" : g.cluster_uuid,
                     g.clique_id >= 0 ? std::to_string(g.clique_id) : "N/A");
  if (r.share) {
    s += fmt::format("  share gpu{} -> gpu{}: {} handle ({} bytes): {}\n", r.share_exporter, r.share_importer, r.share->handle,
                     r.share->handle_bytes, r.share->ok ? "works" : "FAILS: " + r.share->reason);
    for (const auto& st : r.share->steps) s += fmt::format("    {:<7} {} -- {}\n", st.step, st.how, st.authority);
  }
  return s;
}

}  // namespace racksim::fabric
