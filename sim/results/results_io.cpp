#include "sim/results/results_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "models/collectives/collective.hpp"
#include "sim/core/statistics.hpp"
#include "sim/core/units.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim {

namespace {

using ojson = nlohmann::ordered_json;

const std::vector<std::string>& kind_order() {
  static const std::vector<std::string> order = {"nvlink", "c2c", "pcie", "cpu-cpu", "nic", "ib"};
  return order;
}

double us(double s) { return round_to_significant(units::s_to_us(s)); }
double gbps(double bps) { return round_to_significant(units::Bps_to_GBps(bps)); }

// The held-out error of a result (sim/calib/heldout_errors.hpp), or null.
ojson heldout_json(const std::optional<HeldoutError>& h) {
  if (!h) return nullptr;
  ojson j;
  j["class"] = h->class_text;
  j["points"] = h->points;
  j["systems"] = h->systems;
  j["gpus_measured"] = {h->min_gpus, h->max_gpus};
  j["median_abs_pct"] = percent_to_tenth(h->median_abs);
  j["p90_abs_pct"] = percent_to_tenth(h->p90_abs);
  j["worst_abs_pct"] = percent_to_tenth(h->worst_abs);
  j["median_signed_pct"] = percent_to_tenth(h->median_signed);
  j["basis"] = h->basis;
  return j;
}

ojson result_json(const RunResult& r) {
  ojson j;
  j["system"] = r.system;
  j["racks"] = r.racks;
  j["op"] = r.op;
  j["algo"] = r.algorithm;
  j["algo_note"] = r.algorithm_note;
  j["protocol"] = r.protocol;
  j["channels"] = r.channels;
  j["gpus"] = r.gpus;
  j["bytes"] = r.bytes;
  j["chunk_bytes"] = r.chunk_bytes;
  j["time_us"] = us(r.time_s);
  j["algbw_GBps"] = gbps(r.algbw_Bps);
  j["busbw_GBps"] = gbps(r.busbw_Bps);
  ojson phases = ojson::array();
  for (const auto& p : r.phases) phases.push_back({{"name", p.name}, {"time_us", us(p.time_s)}});
  j["phases"] = phases;
  ojson links = ojson::array();
  for (const auto& s : summarize_links(r))
    links.push_back({{"kind", s.kind},
                     {"links", s.links},
                     {"bytes", static_cast<std::uint64_t>(std::llround(s.bytes))},
                     {"max_utilization", round_to_significant(s.max_utilization)}});
  j["links"] = links;
  j["calibration"] = r.calibration;
  j["failures"] = r.failures;
  j["warnings"] = r.warnings;
  j["heldout_error"] = heldout_json(r.heldout_error);
  if (!r.engine.mode.empty()) {
    ojson e;
    e["mode"] = r.engine.mode;
    e["tasks"] = r.engine.tasks;
    e["simulated_tasks"] = r.engine.simulated_tasks;
    if (!r.engine.note.empty()) e["note"] = r.engine.note;
    j["engine"] = e;
  }
  return j;
}

std::string redop_of(const std::string& op) {
  return op == "all_reduce" || op == "reduce_scatter" || op == "reduce" || op == "send_recv" ? "sum" : "none";
}

// nccl-tests' count column: elements of the per-rank parameter (all_gather, reduce_scatter, alltoall:
// size / ranks; the others: size).
std::uint64_t count_of(const RunResult& r, std::uint64_t element) {
  std::uint64_t count = r.bytes / element;
  if ((r.op == "all_gather" || r.op == "reduce_scatter" || r.op == "all_to_all") && r.gpus > 0) count /= r.gpus;
  return count;
}

// nccl-tests prints times with fewer decimals as they grow.
std::string time_text(double time_us) {
  if (time_us >= 10000.0) return fmt::format("{:7.0f}", time_us);
  if (time_us >= 100.0) return fmt::format("{:7.1f}", time_us);
  return fmt::format("{:7.2f}", time_us);
}

}  // namespace

double round_to_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, digits - magnitude);
  return std::round(value * scale) / scale;
}

std::vector<LinkKindSummary> summarize_links(const RunResult& result) {
  std::map<std::string, LinkKindSummary> by_kind;
  for (const auto& l : result.links) {
    if (l.bytes <= 0) continue;
    auto& s = by_kind[l.kind];
    s.kind = l.kind;
    s.links += 1;
    s.bytes += l.bytes;
    s.max_utilization = std::max(s.max_utilization, l.max_utilization);
  }
  std::vector<LinkKindSummary> out;
  for (const auto& k : kind_order())
    if (by_kind.count(k)) out.push_back(by_kind[k]);
  for (const auto& [k, s] : by_kind)
    if (std::find(kind_order().begin(), kind_order().end(), k) == kind_order().end()) out.push_back(s);
  return out;
}

std::string heldout_error_to_json_text(const std::optional<HeldoutError>& heldout) {
  return dump_json(heldout_json(heldout));
}

std::string run_result_to_json_text(const RunResult& result) { return dump_json(result_json(result), 2) + "\n"; }

std::string run_results_to_json_text(const std::vector<RunResult>& results) {
  ojson a = ojson::array();
  for (const auto& r : results) a.push_back(result_json(r));
  return dump_json(a, 2) + "\n";
}

std::string run_result_to_table(const RunResult& r) {
  std::string out;
  out += fmt::format("{} x{} {}(s): {} {} on {} GPUs, {} per rank ({} B), calibration {}\n", r.system, r.racks, r.rack_unit, r.op,
                     r.algorithm, r.gpus, units::format_bytes(r.bytes), r.bytes, r.calibration);
  if (!r.protocol.empty()) out += fmt::format("  nccl: {} {} on {} channel(s)\n", r.algorithm, r.protocol, r.channels);
  if (!r.algorithm_note.empty()) out += "  note: " + r.algorithm_note + "\n";
  for (const auto& w : r.warnings) out += "  warning: " + w + "\n";
  for (const auto& f : r.failures) out += "  failure: " + f + "\n";
  std::size_t width = 24;
  for (const auto& p : r.phases) width = std::max(width, p.name.size() + 8);
  out += fmt::format("  {:<{}}{:>12.3f} us\n", "time", width, units::s_to_us(r.time_s));
  out += fmt::format("  {:<{}}{:>12.2f} GB/s\n", "algbw", width, units::Bps_to_GBps(r.algbw_Bps));
  out += fmt::format("  {:<{}}{:>12.2f} GB/s\n", "busbw", width, units::Bps_to_GBps(r.busbw_Bps));
  if (const auto& h = r.heldout_error) {
    const auto pc = percent_to_tenth;
    out += fmt::format("  held-out error: {:.1f} % median, {:.1f} % 90th percentile, {:.1f} % worst (time {:+.1f} % vs "
                       "measured, median) over {} point(s) of {}, {}-{} GPUs, on {} system(s) left out of the fit{}\n",
                       pc(h->median_abs), pc(h->p90_abs), pc(h->worst_abs), pc(h->median_signed), h->points, h->class_text,
                       h->min_gpus, h->max_gpus, h->systems.size(),
                       r.gpus > h->max_gpus || r.gpus < h->min_gpus ? " (this run's GPU count is outside that range)" : "");
  }
  for (const auto& p : r.phases)
    out += fmt::format("  {:<{}}{:>12.3f} us\n", "phase " + p.name, width, units::s_to_us(p.time_s));
  for (const auto& s : summarize_links(r))
    out += fmt::format("  links {:<8}{:>6} used {:>14.0f} B   max utilisation {:.3f}\n", s.kind, s.links, s.bytes,
                       s.max_utilization);
  if (r.engine.mode == "aggregated")
    out += fmt::format("  engine: aggregated, {} of {} tasks simulated (symmetric copies once each, exact{}{})\n",
                       r.engine.simulated_tasks, r.engine.tasks, r.engine.note.empty() ? "" : "; ", r.engine.note);
  else if (r.engine.mode == "analytic")
    out += "  engine: not run; " + r.engine.note + "\n";
  else if (!r.engine.mode.empty())
    out += fmt::format("  engine: full, {} tasks ({})\n", r.engine.tasks, r.engine.note);
  return out;
}

std::string nccl_tests_table(const std::vector<RunResult>& rows, const std::string& dtype) {
  const std::uint64_t element = dtype_size_bytes(dtype);
  std::string out;
  if (!rows.empty()) {
    const RunResult& f = rows.front();
    out += fmt::format("# racksim sweep: {} x{} {}(s), {}/{}, {} ranks, calibration {}{}\n", f.system, f.racks, f.rack_unit, f.op,
                       f.algorithm, f.gpus, f.calibration, f.failures.empty() ? "" : ", with failures");
  }
  out += "#\n";
  out += "#                                                              out-of-place                       in-place          \n";
  out += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
  double busbw_sum = 0;
  for (const auto& r : rows) {
    const int root = r.op == "broadcast" || r.op == "reduce" ? 0 : -1;
    const std::string cell = fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", time_text(units::s_to_us(r.time_s)),
                                         units::Bps_to_GBps(r.algbw_Bps), units::Bps_to_GBps(r.busbw_Bps), "N/A");
    // One rank in place: NCCL launches nothing (src/device/onerank.cu at v2.28.9-1:48-55), no time to divide by.
    const std::string in_place = r.gpus == 1 ? fmt::format("  {}  {:>6}  {:>6}  {:>5}", time_text(0), "N/A", "N/A", "N/A") : cell;
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.bytes, count_of(r, element), dtype, redop_of(r.op), root) +
           cell + in_place + "\n";
    busbw_sum += units::Bps_to_GBps(r.busbw_Bps);
  }
  out += "# Out of bounds values : 0 OK\n";
  out += fmt::format("# Avg bus bandwidth    : {:.6g} \n", rows.empty() ? 0.0 : busbw_sum / rows.size());
  // The held-out errors of the rows' classes (one line per class, in the rows' order; sim/calib/heldout_errors.hpp).
  std::vector<std::string> classes;
  for (const auto& r : rows) {
    const auto& h = r.heldout_error;
    if (!h || std::find(classes.begin(), classes.end(), h->class_text) != classes.end()) continue;
    if (classes.empty()) out += "# Held-out error (leave one system out; |time error| median / 90th percentile / worst):\n";
    classes.push_back(h->class_text);
    out += fmt::format("#   {:.1f} % / {:.1f} % / {:.1f} % over {} point(s) of {}\n", percent_to_tenth(h->median_abs),
                       percent_to_tenth(h->p90_abs), percent_to_tenth(h->worst_abs), h->points, h->class_text);
  }
  out += "#\n";
  return out;
}

std::string run_results_to_csv(const std::vector<RunResult>& rows, const std::string& dtype) {
  const std::uint64_t element = dtype_size_bytes(dtype);
  std::string out = "system,racks,op,algo,gpus,size_B,count,type,time_us,algbw_GBps,busbw_GBps,calibration\n";
  for (const auto& r : rows)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.system, r.racks, r.op, r.algorithm, r.gpus, r.bytes,
                       count_of(r, element), dtype, us(r.time_s), gbps(r.algbw_Bps), gbps(r.busbw_Bps), r.calibration);
  return out;
}

std::string run_result_to_trace_json(const RunResult& r) {
  // Tracks: GPUs and switch planes in process 1, links in process 2; thread ids in order of first use.
  std::map<std::string, int> tids;
  auto tid_of = [&](const std::string& track) {
    auto it = tids.find(track);
    if (it != tids.end()) return it->second;
    const int id = static_cast<int>(tids.size()) + 1;
    tids.emplace(track, id);
    return id;
  };
  ojson events = ojson::array();
  for (const auto& e : r.trace) {
    const bool link = e.track.rfind("link ", 0) == 0;
    events.push_back({{"name", e.name},
                      {"cat", link ? "link" : "task"},
                      {"ph", "X"},
                      {"ts", units::s_to_us(e.start_s)},
                      {"dur", units::s_to_us(e.end_s - e.start_s)},
                      {"pid", link ? 2 : 1},
                      {"tid", tid_of(e.track)}});
  }
  ojson meta = ojson::array();
  meta.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "GPUs and switch planes"}}}});
  meta.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 2}, {"args", {{"name", "links"}}}});
  for (const auto& [track, id] : tids)
    meta.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", track.rfind("link ", 0) == 0 ? 2 : 1},
                    {"tid", id},
                    {"args", {{"name", track}}}});
  for (auto& e : events) meta.push_back(std::move(e));
  ojson doc;
  doc["traceEvents"] = meta;
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"system", r.system}, {"op", r.op}, {"algo", r.algorithm}, {"gpus", r.gpus}, {"bytes", r.bytes}};
  return dump_json(doc) + "\n";
}

}  // namespace racksim
