#include "models/calibration/probe_data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "sim/core/json_reader.hpp"
#include "sim/core/units.hpp"

namespace racksim::calibration {

namespace fs = std::filesystem;

namespace {

double num(const nlohmann::json& rec, const char* key, const std::string& where) {
  const auto it = rec.find(key);
  if (it == rec.end() || !it->is_number() || !std::isfinite(it->get<double>()))
    throw InputError(where, std::string("/") + key, it == rec.end() ? "(missing)" : json_excerpt(*it),
                     "a finite number (calibrate/probes/README.md)");
  return it->get<double>();
}
// A size, a time, a rate or a count that must be above zero (a negative byte count or time used to be read and
// give a negative bandwidth): > 0, or >= 0 where `zero_allowed` (nccl-tests' busbw of 0.00 at its smallest sizes).
double positive_num(const nlohmann::json& rec, const char* key, const std::string& where, bool zero_allowed = false) {
  const double v = num(rec, key, where);
  if (zero_allowed ? v < 0 : !(v > 0))
    throw InputError(where, std::string("/") + key, json_excerpt(rec.at(key)),
                     zero_allowed ? "a finite number >= 0 (calibrate/probes/README.md)" : "a finite number > 0 (calibrate/probes/README.md)");
  return v;
}
std::string str(const nlohmann::json& rec, const char* key, const std::string& fallback = "") {
  const auto it = rec.find(key);
  return (it != rec.end() && it->is_string()) ? it->get<std::string>() : fallback;
}
// A GPU index or a rank count: a whole number in [0, 4096] (the probes' own range; calibrate/probes/README.md).
int device_index(const nlohmann::json& rec, const char* key, const std::string& where) {
  const double v = num(rec, key, where);
  if (!(v >= 0 && v <= 4096 && v == std::floor(v)))
    throw InputError(where, std::string("/") + key, json_excerpt(rec.at(key)), "a whole number in [0, 4096]");
  return static_cast<int>(v);
}
bool has_value(const nlohmann::json& rec, const char* key) {
  const auto it = rec.find(key);
  return it != rec.end() && !it->is_null();
}

struct Reader {
  ProbeDirectoryInfo info;
  MeasurementSet out;
  std::map<std::string, int> skipped_series;  // series -> points left out (one skipped entry per series)
  std::map<std::string, std::string> skipped_reason;
  std::map<std::string, std::string> skipped_id;

  // Records of the compute probes, named for the skipped list; nullptr for other record types.
  static const char* compute_record_label(const std::string& type) {
    if (type == "gemm") return "GEMM";
    if (type == "grouped_gemm") return "grouped GEMM";
    if (type == "attention") return "attention";
    if (type == "elementwise") return "elementwise kernels";
    if (type == "launch") return "launch floor";
    return nullptr;
  }

  void skip_series(const std::string& id, const std::string& series, const std::string& reason) {
    if (skipped_series[series]++ == 0) {
      skipped_reason[series] = reason;
      skipped_id[series] = id;
    }
  }

  Measurement base(const std::string& id, const std::string& file) {
    Measurement m;
    m.id = id;
    m.system = info.system;
    m.racks = 1;
    m.measured_on = info.device + " (" + info.machine + ")";
    m.source = info.path + "/" + file;
    m.confidence = "measured";
    return m;
  }

  void record(const nlohmann::json& rec, const std::string& file, int line) {
    const std::string id = info.machine + "/" + file + ":" + std::to_string(line);
    const std::string where = info.path + "/" + file + ":" + std::to_string(line);
    const std::string type = str(rec, "record");
    if (type == "copy") {
      const std::string dir = str(rec, "direction"), host = str(rec, "host_memory");
      const double bytes = positive_num(rec, "bytes", where), t = units::us_to_s(positive_num(rec, "time_us", where));
      Measurement m = base(id, file);
      m.bytes = bytes;
      m.time_s = t;
      m.reported_GBps = has_value(rec, "GBps") ? positive_num(rec, "GBps", where, true) : bytes / t / units::kGB;
      m.timer_floor_s = info.timer_floor_s;
      if (dir == "d2d") {
        m.kind = MeasurementKind::memory;
        m.src = "gpu0";
        m.memory_op = "copy engine D2D (read + write traffic)";
        m.bytes = 2 * bytes;  // bytes read plus bytes written in HBM
        m.reported_GBps = 2 * bytes / t / units::kGB;
        m.series = info.machine + " D2D copy";
        out.measurements.push_back(std::move(m));
        return;
      }
      const std::string series = info.machine + " " + dir + " " + host;
      if (host != "pinned")
        return skip_series(id, series,
                           "pageable copies: the driver stages them through pinned host buffers with CPU copies, "
                           "a path racksim does not model (and this VM's figures are unstable: SUMMARY.md)");
      m.kind = MeasurementKind::transfer;
      m.src = dir == "h2d" ? "cpu0" : "gpu0";
      m.dst = dir == "h2d" ? "gpu0" : "cpu0";
      m.engine = "copy";
      m.series = series;
      out.measurements.push_back(std::move(m));
    } else if (type == "sm_bandwidth") {
      const std::string memory = str(rec, "memory"), op = str(rec, "op");
      const std::string series = info.machine + " SM " + memory + " " + op;
      Measurement m = base(id, file);
      m.bytes = positive_num(rec, "bytes", where);
      m.time_s = units::us_to_s(positive_num(rec, "time_us", where));
      m.reported_GBps = m.bytes / m.time_s / units::kGB;
      m.timer_floor_s = info.timer_floor_s;
      m.series = series;
      if (memory == "hbm") {
        m.kind = MeasurementKind::memory;
        m.src = "gpu0";
        m.memory_op = op;
      } else if (memory == "pinned_zero_copy") {
        m.kind = MeasurementKind::transfer;
        m.src = op == "read" ? "cpu0" : "gpu0";
        m.dst = op == "read" ? "gpu0" : "cpu0";
        m.engine = "sm";
      } else {
        return skip_series(id, series, "SM access to malloc'd (pageable) memory: page faults and migration are not modelled");
      }
      out.measurements.push_back(std::move(m));
    } else if (type == "p2p") {
      const int src = device_index(rec, "src", where), dst = device_index(rec, "dst", where);
      const std::string mode = str(rec, "mode");
      Measurement m = base(id, file);
      m.kind = MeasurementKind::transfer;
      m.src = "gpu" + std::to_string(src);
      m.dst = "gpu" + std::to_string(dst);
      m.engine = mode == "bidirectional" ? "copy both ways" : "copy";
      m.bytes = has_value(rec, "bytes_per_direction") ? positive_num(rec, "bytes_per_direction", where) : positive_num(rec, "bytes", where);
      m.time_s = units::us_to_s(positive_num(rec, "time_us", where));
      m.reported_GBps = has_value(rec, "GBps") ? positive_num(rec, "GBps", where, true) : 0;
      m.timer_floor_s = info.timer_floor_s;
      m.series = info.machine + " p2p " + mode + " " + m.src + "->" + m.dst;
      if (rec.contains("peer_access") && rec["peer_access"].is_boolean() && !rec["peer_access"].get<bool>())
        return skip_series(id, m.series, "no peer access: the driver stages the copy through host memory");
      out.measurements.push_back(std::move(m));
    } else if (type == "collective") {
      Measurement m = base(id, file);
      m.kind = MeasurementKind::collective;
      m.op = collective_op_from_string(str(rec, "op"), where + " /op");
      const std::string algo = str(rec, "algo", "default");
      m.algorithm = algo == "default" ? "auto" : algo;
      // NCCL runs all_to_all as grouped point-to-point sends whatever NCCL_ALGO says (NVIDIA/nccl-tests
      // issue 246): racksim's name for that algorithm is 'direct' (issue 7).
      if (m.op == CollectiveOp::all_to_all) m.algorithm = "direct";
      const int n = device_index(rec, "nranks", where);
      if (n < 1) throw InputError(where, "/nranks", json_excerpt(rec.at("nranks")), "a whole number of ranks >= 1");
      m.series = info.machine + " " + str(rec, "op") + " " + m.algorithm + " " + std::to_string(n) + " GPUs";
      if (rec.contains("in_place") && !rec["in_place"].is_boolean())
        throw InputError(where, "/in_place", json_excerpt(rec.at("in_place")), "true or false");
      if (n == 1 && rec.value("in_place", false))
        return skip_series(id, m.series + " in place",
                           "one rank in place: NCCL launches nothing (src/device/onerank.cu at v2.28.9-1:48-55); racksim "
                           "prices the call out of place, nccl-tests' first column (a copy within the GPU)");
      for (int g = 0; g < n; ++g) m.gpus.push_back(g);
      m.bytes = positive_num(rec, "bytes", where);
      m.time_s = units::us_to_s(positive_num(rec, "time_us", where));
      m.reported_GBps = has_value(rec, "busbw_GBps") ? positive_num(rec, "busbw_GBps", where, true) : 0;
      m.nccl_version = info.nccl_version;
      out.measurements.push_back(std::move(m));
    } else if (const char* what = compute_record_label(type)) {
      // compute_torch.py / gemm_bf16.cu: what the planner's training fit reads (training_fit_engine.cpp)
      const std::string dtype = str(rec, "dtype");
      skip_series(id, info.machine + " " + (dtype.empty() ? "" : dtype + " ") + what,
                  "a compute rate, not a link or collective (the planner's training fit reads the GEMM, grouped GEMM, attention and elementwise records)");
    }
  }
};

}  // namespace

std::string guess_probe_system(const std::string& device, int device_count, const std::string& where, const std::string& pointer) {
  auto has = [&](const char* s) { return device.find(s) != std::string::npos; };
  // A PCIe or NVL card carries an SXM part's name at other clocks, power and HBM (H100 PCIe: 2.0 TB/s against the
  // SXM's 3.35): no system here describes one, so it is named, not guessed onto the SXM module's topology.
  if (has("PCIe") || has(" NVL"))
    throw InputError(where, pointer, "'" + device + "' (a PCIe or NVL card)",
                     "a GPU racksim describes by name (SXM modules and superchips); otherwise name the system: --probes DIR=SYSTEM");
  // Longer names first: "GB200" holds "B200", "GH200" and "H200" hold "H20".
  if (has("GB300")) return "gb300-nvl72";
  if (has("GB200")) return "gb200-nvl72";
  if (has("GH200")) return "gh200";
  if (has("GB10")) return "dgx-spark";
  if (has("B300")) return "hgx-b300";
  if (has("B200")) return "hgx-b200";
  if (has("H200")) return device_count > 1 ? "hgx-h200" : "h200-pcie";
  if (has("H100")) return "hgx-h100";
  if (has("H800")) return "hgx-h800";
  if (has("H20")) return "hgx-h20";
  if (has("A100")) return "hgx-a100";
  if (has("RTX 4090")) return "rtx4090-pcie";
  throw InputError(where, pointer, "'" + device + "'",
                   "a GPU racksim describes (H100, H200, H800, H20, A100, B200, B300, GH200, GB200, GB300, GB10, RTX 4090); "
                   "otherwise name the system: --probes DIR=SYSTEM");
}

MeasurementSet load_probe_directory(const std::string& spec, ProbeDirectoryInfo* info_out) {
  std::string dir = spec, system;
  if (const auto eq = spec.rfind('='); eq != std::string::npos) {
    dir = spec.substr(0, eq);
    system = spec.substr(eq + 1);
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!fs::is_directory(dir))
    throw InputError("--probes", "", "'" + dir + "'", "a directory written by calibrate/run_probes.sh");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".jsonl") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());  // deterministic order
  if (files.empty()) throw InputError("--probes", "", "'" + dir + "'", "a directory holding <probe>.jsonl files");

  // First pass: headers and the timer floor, so every record can be mapped.
  std::vector<std::pair<std::string, std::vector<std::pair<int, nlohmann::json>>>> parsed;
  Reader r;
  r.info.path = dir;
  r.info.machine = fs::path(dir).filename().string();
  for (const auto& f : files) {
    std::ifstream in(dir + "/" + f);
    std::vector<std::pair<int, nlohmann::json>> recs;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json rec = parse_json_text(line, dir + "/" + f + ":" + std::to_string(n));
      if (!rec.is_object()) continue;
      const std::string type = str(rec, "record");
      if (type == "header") {
        if (r.info.device.empty()) r.info.device = str(rec, "device");
        if (rec.contains("device_count") && rec["device_count"].is_number())
          r.info.device_count = std::max(r.info.device_count, rec["device_count"].get<int>());
        if (rec.contains("world_size") && rec["world_size"].is_number())
          r.info.device_count = std::max(r.info.device_count, rec["world_size"].get<int>());
        if (r.info.nccl_version.empty()) r.info.nccl_version = str(rec, "nccl_version");
      } else if (type == "timer" && rec.contains("time_us") && rec["time_us"].is_number()) {
        r.info.timer_floor_s = units::us_to_s(rec["time_us"].get<double>());
      }
      recs.emplace_back(n, std::move(rec));
    }
    parsed.emplace_back(f, std::move(recs));
  }
  if (r.info.device.empty())
    throw InputError(dir, "", "no header with a device name", "probe output with a GPU (calibrate/probes/README.md)");
  r.info.system = system.empty() ? guess_probe_system(r.info.device, r.info.device_count, dir) : system;
  for (const auto& [f, recs] : parsed)
    for (const auto& [n, rec] : recs) r.record(rec, f, n);
  for (const auto& [series, count] : r.skipped_series)
    r.out.skipped.push_back({r.skipped_id[series], series + " (" + std::to_string(count) + " points)",
                             r.skipped_reason[series]});
  if (info_out) *info_out = r.info;
  return std::move(r.out);
}

}  // namespace racksim::calibration
