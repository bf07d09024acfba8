// JSON and table writers for a job mix's result (racksim jobs). Times in microseconds, 6 significant
// digits, so that the same inputs give byte-identical text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/jobs/job_runner.hpp"
#include "sim/results/results_io.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim {

namespace {

using json = nlohmann::ordered_json;

double us(double s) { return round_to_significant(s * 1e6); }
double r6(double x) { return round_to_significant(x); }

json duration_json(const Duration& d) { return json{{"s", r6(d.seconds)}, {"source", d.source}}; }

}  // namespace

std::string mix_result_to_json_text(const MixResult& m) {
  json j;
  j["name"] = m.name;
  j["system"] = m.system;
  j["racks"] = m.racks;
  j["calibration"] = m.calibration;
  j["partition_mode"] = m.mode;
  j["partitions"] = json::array();
  for (const auto& [name, trays] : m.partitions) j["partitions"].push_back({{"name", name}, {"trays", trays}});
  j["jobs"] = json::array();
  for (const auto& r : m.jobs) {
    json jr{{"name", r.name},           {"placement", r.placement}, {"gpus", r.gpus},
            {"trays", r.trays},         {"partitions", r.partitions}, {"alone_us", us(r.alone_s)},
            {"together_us", us(r.together_s)}, {"slowdown", r6(r.slowdown)}};
    if (r.step)
      jr["step"] = {{"layout", r.step->layout}, {"planner_step_us", us(r.step->planner_step_s)},
                    {"dp_total_us", us(r.step->dp_total_s)}, {"dp_exposed_us", us(r.step->dp_exposed_s)},
                    {"compute_us", us(r.step->compute_s)}};
    jr["collectives"] = json::array();
    for (const auto& c : r.collectives)
      jr["collectives"].push_back({{"what", c.what}, {"algo", c.algorithm}, {"groups", c.groups},
                                   {"alone_us", us(c.alone_s)}, {"together_us", us(c.together_s)}});
    j["jobs"].push_back(std::move(jr));
  }
  j["shared_links"] = json::array();
  for (const auto& s : m.shared_links) {
    json bytes = json::object();
    for (const auto& [job, b] : s.job_bytes) bytes[job] = r6(b);
    j["shared_links"].push_back({{"name", s.name}, {"kind", s.kind}, {"bytes", bytes}, {"max_utilization", r6(s.max_utilization)}});
  }
  j["shared_fabrics"] = json::array();
  for (const auto& f : m.shared_fabrics)
    j["shared_fabrics"].push_back({{"fabric", f.fabric}, {"jobs", f.jobs},
                                   {"note", "they share the domain's NVLink switch chips: a non-blocking crossbar in "
                                            "this model, but a lost switch concerns all of them"}});
  if (m.failure) {
    const FailureOutcome& f = *m.failure;
    json jf{{"items", f.items}, {"partition_mode", f.mode}};
    jf["partitions"] = json::array();
    for (const auto& p : f.partitions) jf["partitions"].push_back({{"name", p.name}, {"state", p.state}, {"reason", p.reason}});
    jf["jobs"] = json::array();
    for (const auto& x : f.jobs) {
      json jx{{"name", x.name}, {"fate", x.fate}, {"reason", x.reason}};
      jx["time_after_us"] = x.time_after_s < 0 ? json(nullptr) : json(us(x.time_after_s));
      jx["slowdown_after"] = x.time_after_s < 0 ? json(nullptr) : json(r6(x.slowdown_after));
      jx["back_after_s"] = r6(x.back_after_s);
      jx["back_after"] = x.back_after;
      jx["note"] = x.note;
      jf["jobs"].push_back(std::move(jx));
    }
    const RecoveryTimes& rt = m.recovery;
    jf["recovery"] = {{"restart", duration_json(rt.restart)},           {"tray_reboot", duration_json(rt.tray_reboot)},
                      {"gpu_recovery", duration_json(rt.gpu_recovery)}, {"link_retrain", duration_json(rt.link_retrain)},
                      {"switch_repair", duration_json(rt.switch_repair)}, {"repartition", duration_json(rt.repartition)},
                      {"imex_restart", duration_json(rt.imex_restart)}, {"hardware_repair", duration_json(rt.hardware_repair)}};
    j["failure"] = std::move(jf);
  }
  return dump_json(j, 2) + "\n";
}

std::string mix_result_to_table(const MixResult& m) {
  std::string out = fmt::format("{}{} x{} {}(s), partition mode {}, calibration {}\n",
                                m.name.empty() ? "" : m.name + ": ", m.system, m.racks, m.rack_unit, m.mode, m.calibration);
  if (!m.partitions.empty()) {
    out += "  partitions:";
    for (const auto& [name, trays] : m.partitions)
      out += fmt::format(" {} (trays {}-{})", name, trays.front(), trays.back());
    out += "\n";
  }
  out += fmt::format("  {:<12} {:>5} {:>14} {:>14} {:>9}  placement\n", "job", "GPUs", "alone us", "together us", "slowdown");
  for (const auto& r : m.jobs)
    out += fmt::format("  {:<12} {:>5} {:>14.1f} {:>14.1f} {:>8.2f}%  {}\n", r.name, r.gpus, r.alone_s * 1e6,
                       r.together_s * 1e6, 100 * r.slowdown, r.placement);
  if (m.shared_links.empty()) {
    out += "  links shared by several jobs: none\n";
  } else {
    out += fmt::format("  links shared by several jobs: {} (busiest first)\n", m.shared_links.size());
    for (std::size_t i = 0; i < m.shared_links.size() && i < 8; ++i) {
      const SharedLink& s = m.shared_links[i];
      std::string jobs;
      for (const auto& [job, b] : s.job_bytes) jobs += (jobs.empty() ? "" : ", ") + job;
      out += fmt::format("    {:<34} {:<6} max utilisation {:.3f}  {}\n", s.name, s.kind, s.max_utilization, jobs);
    }
  }
  for (const auto& f : m.shared_fabrics) {
    std::string jobs;
    for (const auto& n : f.jobs) jobs += (jobs.empty() ? "" : ", ") + n;
    out += fmt::format("  NVLink switch fabric {} shared by {} (non-blocking crossbar: no contention)\n", f.fabric, jobs);
  }
  if (m.failure) {
    const FailureOutcome& f = *m.failure;
    std::string items;
    for (const auto& i : f.items) items += (items.empty() ? "" : ", ") + i;
    out += fmt::format("failure {} ({} mode)\n", items, f.mode);
    for (const auto& p : f.partitions) {
      std::string line = fmt::format("  partition {:<10} {:<10} {}", p.name, p.state, p.reason);
      line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks where there is no reason
      out += line + "\n";
    }
    for (const auto& x : f.jobs) {
      out += fmt::format("  {:<12} {:<10}", x.name, x.fate);
      if (x.time_after_s >= 0) out += fmt::format(" after: {:.1f} us ({:+.2f}%)", x.time_after_s * 1e6, 100 * x.slowdown_after);
      if (x.back_after_s > 0) out += fmt::format(" back after {:.0f} s: {}", x.back_after_s, x.back_after);
      out += "\n";
      if (!x.reason.empty()) out += "      " + x.reason + "\n";
      if (!x.note.empty()) out += "      " + x.note + "\n";
    }
  }
  return out;
}

}  // namespace racksim
