#include "models/calibration/published_data.hpp"
#include "models/calibration/public_collectives.hpp"
#include "models/calibration/record_systems.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "sim/core/json_reader.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_spec.hpp"

#ifndef RACKSIM_CALIBRATION_DIR
#error "RACKSIM_CALIBRATION_DIR must be defined by the build"
#endif

namespace racksim::calibration {

namespace {

// ---- where each published machine sits in racksim ------------------------------------------------

struct CollectiveSystem {
  const char* text;     // the record's `system`, exactly
  const char* system;   // racksim id; nullptr: not expressible
  int racks;
  const char* reason;   // why not expressible
};

const CollectiveSystem kCollectiveSystems[] = {
    {"Azure ND H100 v5 (HGX H100 8-GPU, Xeon 8480C)", "hgx-h100", 1, ""},
    {"Azure ND H200 v5 (HGX H200 8-GPU, Xeon 8480C)", "hgx-h200", 1, ""},
    {"Azure ND GB200 v6 (one GB200 compute tray = 4 GPUs, NVL72 fabric)", "gb200-nvl72", 1, ""},
    {"HGX H100 8-GPU", "hgx-h100", 1, ""},
    {"HGX H200 8-GPU", "hgx-h200", 1, ""},
    {"HGX H100 x2 nodes (CoreWeave, IB)", "hgx-h100", 2, ""},
    {"HGX B200 x2 nodes (CoreWeave b200-8x, IB)", "hgx-b200", 2, ""},
    {"HGX H100 + 8x400G RoCE, 1-2 nodes", nullptr, 0,
     "one record for two configurations (8-16 GPUs, busbw '330 -> 430' with NVLS off -> on): no single run to predict"},
    {"HGX H800 8-GPU", "hgx-h800", 1, ""},
    {"GH200 x2 nodes, 4x200Gbps ports each (K8s SR-IOV)", nullptr, 0,
     "two GH200 nodes over 4 x 200 Gb/s SR-IOV ports with GPUDirect RDMA toggled: racksim's gh200 system is one "
     "superchip without a scale-out NIC"},
};

enum class ProbeAction { transfer, memory, skip };
struct ProbeRule {
  const char* system_text;
  const char* probe_prefix;  // the record's `probe` starts with this
  ProbeAction action;
  const char* system;        // transfer / memory
  int racks;
  const char* src;           // transfer: route endpoints; memory: the GPU
  const char* dst;
  const char* engine_or_op;  // transfer: "copy" | "sm" | "nccl"; memory: what was streamed
  const char* reason;        // skip
};

constexpr const char* kTwoSuperchips =
    "two GH200 superchips joined Grace to Grace: racksim's gh200 system is one superchip";
constexpr const char* kCpuMemory =
    "CPU memory bandwidth (STREAM on Grace): not a prediction target; models/memory uses the topology's figure";

const ProbeRule kProbeRules[] = {
    {"GH200 (dual-module workstation)", "HBM BabelStream Triad", ProbeAction::memory, "gh200", 1, "gpu0", "", "triad", ""},
    {"GH200 (dual-module workstation)", "Grace LPDDR5X STREAM", ProbeAction::skip, "", 0, "", "", "", kCpuMemory},
    {"GH200 (dual-module workstation)", "C2C H2D copy, local", ProbeAction::transfer, "gh200", 1, "cpu0", "gpu0", "copy", ""},
    {"GH200 (dual-module workstation)", "C2C D2H copy, local", ProbeAction::transfer, "gh200", 1, "gpu0", "cpu0", "copy", ""},
    {"GH200 (dual-module workstation)", "H2D from remote-socket", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "D2H to remote-socket", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "Inter-Grace STREAM", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "Interleaved 2-socket", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "GPU0->GPU1 staged copy", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "GPU1->GPU0 staged copy", ProbeAction::skip, "", 0, "", "", "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "GPU kernel R/W of pinned host memory, remote", ProbeAction::skip, "", 0, "", "",
     "", kTwoSuperchips},
    {"GH200 (dual-module workstation)", "GPU kernel R/W", ProbeAction::skip, "", 0, "", "", "",
     "a kernel reading and writing host memory together; the source does not say how bytes are counted"},
    {"GH200 (dual-module workstation)", "managed memory", ProbeAction::skip, "", 0, "", "", "",
     "managed-memory page migration is not a racksim prediction"},
    {"GH200 (dual-module workstation)", "cudaMalloc custom R/W kernel", ProbeAction::skip, "", 0, "", "", "",
     "a custom read/write kernel; the source does not say how bytes are counted"},
    {"GH200 480GB", "C2C host_to_device_memcpy_ce", ProbeAction::transfer, "gh200", 1, "cpu0", "gpu0", "copy", ""},
    {"GH200 480GB", "C2C host_to_device_memcpy_sm", ProbeAction::transfer, "gh200", 1, "cpu0", "gpu0", "sm", ""},
    {"GH200 480GB", "C2C device_to_host", ProbeAction::transfer, "gh200", 1, "gpu0", "cpu0", "copy", ""},
    {"GH200 480GB (96GB HBM3)", "OpenCL coalesced read", ProbeAction::memory, "gh200", 1, "gpu0", "", "read", ""},
    {"GH200 480GB (96GB HBM3)", "OpenCL coalesced write", ProbeAction::memory, "gh200", 1, "gpu0", "", "write", ""},
    {"Azure ND GB200 v6 (GB200 tray: 2 Grace + 4 B200)", "nvbandwidth Host to Device", ProbeAction::transfer,
     "gb200-nvl72", 1, "cpu0", "gpu0", "copy", ""},
    {"Azure ND GB200 v6 (GB200 tray: 2 Grace + 4 B200)", "nvbandwidth Device to Host", ProbeAction::transfer,
     "gb200-nvl72", 1, "gpu0", "cpu0", "copy", ""},
    {"Azure ND GB200 v6 (GB200 tray: 2 Grace + 4 B200)", "nvbandwidth Device to Device read", ProbeAction::skip, "", 0,
     "", "", "", "aggregation not stated (1530 GB/s is above one direction of one GPU's NVLink 5, 900 GB/s)"},
    {"Azure ND GB200 v6 (GB200 tray: 2 Grace + 4 B200)", "CPU STREAM", ProbeAction::skip, "", 0, "", "", "", kCpuMemory},
    {"GB200 NVL72", "nvbandwidth GPU-GPU p2p", ProbeAction::transfer, "gb200-nvl72", 1, "gpu0", "gpu1", "copy", ""},
    {"Azure ND H100 v5 (H100 SXM 80GB, PCIe Gen5 x86)", "HBM STREAM-like", ProbeAction::memory, "hgx-h100", 1, "gpu0",
     "", "", ""},
    {"Azure ND H100 v5 (H100 SXM 80GB, PCIe Gen5 x86)", "nvbandwidth Host to Device", ProbeAction::transfer, "hgx-h100",
     1, "cpu0", "gpu0", "copy", ""},
    {"Azure ND H100 v5 (H100 SXM 80GB, PCIe Gen5 x86)", "nvbandwidth Device to Host", ProbeAction::transfer, "hgx-h100",
     1, "gpu0", "cpu0", "copy", ""},
    {"Azure ND H100 v5 (H100 SXM 80GB, PCIe Gen5 x86)", "nvbandwidth Device to Device read", ProbeAction::skip, "", 0,
     "", "", "", "aggregation not stated (672 GB/s is above one direction of one GPU's NVLink 4, 450 GB/s)"},
    {"Azure ND H200 v5 (H200 141GB, PCIe Gen5 x86)", "HBM STREAM-like", ProbeAction::memory, "hgx-h200", 1, "gpu0", "",
     "", ""},
    {"Azure ND H200 v5 (H200 141GB, PCIe Gen5 x86)", "nvbandwidth Host to Device", ProbeAction::transfer, "hgx-h200", 1,
     "cpu0", "gpu0", "copy", ""},
    {"Azure ND H200 v5 (H200 141GB, PCIe Gen5 x86)", "nvbandwidth Device to Host", ProbeAction::transfer, "hgx-h200", 1,
     "gpu0", "cpu0", "copy", ""},
    {"Azure ND H200 v5 (H200 141GB, PCIe Gen5 x86)", "nvbandwidth Device to Device read", ProbeAction::skip, "", 0, "",
     "", "", "aggregation not stated (671 GB/s is above one direction of one GPU's NVLink 4, 450 GB/s)"},
    {"HGX H100 cluster (8 GPU)", "nvbandwidth host_to_device_memcpy_sm", ProbeAction::transfer, "hgx-h100", 1, "cpu0",
     "gpu0", "sm", ""},
    {"HGX H100 cluster (8 GPU)", "nvbandwidth device_to_host_memcpy_sm", ProbeAction::transfer, "hgx-h100", 1, "gpu0",
     "cpu0", "sm", ""},
    {"HGX H100 SXM 8-GPU", "p2pBandwidthLatencyTest unidirectional P2P=Enabled", ProbeAction::transfer, "hgx-h100", 1,
     "gpu0", "gpu1", "copy", ""},
    {"HGX H100 SXM 8-GPU", "p2pBandwidthLatencyTest unidirectional P2P=Disabled", ProbeAction::skip, "", 0, "", "", "",
     "P2P disabled: the driver stages the copy through host memory, a path racksim does not model"},
    {"HGX H100 SXM 8-GPU", "p2pBandwidthLatencyTest on-diagonal", ProbeAction::skip, "", 0, "", "", "",
     "byte convention unclear (2.5 TB/s copy would be 5 TB/s of read+write traffic, above the 3.35 TB/s HBM peak)"},
    {"HGX H100 SXM 8-GPU", "p2pBandwidthLatencyTest bidirectional", ProbeAction::skip, "", 0, "", "", "",
     "an issue title's round figure; the unidirectional record of the same test is used instead"},
    {"H800", "NVLink unidirectional", ProbeAction::transfer, "hgx-h800", 1, "gpu0", "gpu1", "copy", ""},
    // Not a link measurement: nccl-tests' all-reduce bus bandwidth per NIC, so NCCL's ring losses are in it. The
    // algorithms' efficiencies model those losses (fitted on multi-node ring, tree and NVLS-tree records), and the
    // NIC at this figure charged them twice: a 2-node ring predicted 0.95 x 0.95-0.97 of the wire where
    // Together's B200 rings measure 0.97-0.98 (docs/calibration.md section 3).
    {"NDR 400G CX-7 NIC", "NCCL achievable per-NIC bandwidth", ProbeAction::skip, "", 0, "", "", "",
     "an nccl-tests all-reduce rate per NIC, not the link's: NCCL's losses on it are the algorithms' fitted efficiencies"},
    {"B200", "theoretical HBM peak", ProbeAction::skip, "", 0, "", "", "", "a theoretical figure, not a measurement"},
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool plausible_time_us(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0 && v.get<double>() <= kMaxRecordTime_us;
}

bool plausible_GBps(const nlohmann::json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 && v.get<double>() <= kMaxBandwidth_GBps;
}

namespace {

// Why a record's `bytes` is no size, or "" when it is one: a byte count >= 1, or null / a description ("4G-8G"),
// which the reader replaces by its stated assumption. Anything else is the record's fault: skipped, never replaced
// by the assumed size.
std::string size_fault(const nlohmann::json& v) {
  if (v.is_number())
    return std::isfinite(v.get<double>()) && v.get<double>() >= 1 ? "" : "size " + json_excerpt(v) + " is not a byte count (>= 1)";
  if (v.is_null() || v.is_string()) return "";
  return "size " + json_excerpt(v) + " is neither a byte count, a text nor null";
}

// A number, or "a-b" (a range: the midpoint), or nullopt for null / other text.
std::optional<double> number_or_range(const nlohmann::json& v, std::string* note) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  const double a = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return std::nullopt;
  if (*end == '\0') return a;
  if (*end == '-') {
    char* end2 = nullptr;
    const double b = std::strtod(end + 1, &end2);
    if (end2 != end + 1 && *end2 == '\0' && b >= a) {
      if (note) *note = "range " + s + " GB/s: the midpoint is used";
      return 0.5 * (a + b);
    }
  }
  return std::nullopt;
}

std::optional<std::string> algorithm_of(const std::string& algo_text) {
  if (algo_text.find("->") != std::string::npos) return std::nullopt;
  if (algo_text.find("NVLS off") != std::string::npos) return "ring";
  std::string l = algo_text;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto in = [&](const char* part) { return l.find(part) != std::string::npos; };
  // CollNet (IB SHARP): the algorithm when named, else "collnet": NCCL's choice with CollNet on.
  if ((in("collnet") && !in("collnet_enable=0")) || in("ib sharp")) {
    if (in("collnetdirect") || in("collnet_direct") || in("collnet direct")) return "collnet_direct";
    if (in("collnetchain") || in("collnet_chain") || in("collnet chain")) return "collnet_chain";
    return "collnet";
  }
  if (in("nvlstree") || in("nvls_tree") || in("nvls-tree") || in("nvls tree")) return "nvls_tree";
  if (in("nvls")) return "nvls";
  if (starts_with(l, "ring") || in("algo=ring")) return "ring";
  if (starts_with(l, "tree") || in("algo=tree")) return "tree";
  if (starts_with(l, "default") || starts_with(l, "auto") || l.empty() || in("not stated")) return "auto";
  return std::nullopt;
}

void read_collective(JsonObjectReader& r, const std::string& id, const std::string& where, MeasurementSet& out) {
  const std::string system_text = r.string("system");
  const auto& gpus_v = r.raw("gpus");
  const std::string collective = r.string("collective");
  const std::string algo_text = r.string("algo_if_known");
  const auto& bytes_v = r.raw("bytes");
  const auto& algbw_v = r.raw("algbw_GBps");
  const auto& busbw_v = r.raw("busbw_GBps");
  const auto& time_v = r.raw("time_us");
  const std::string source = r.string("source");
  const std::string notes = r.raw("notes").is_string() ? r.raw("notes").get<std::string>() : "";
  const auto& inplace_v = r.raw("inplace");
  r.strings("derived_fields");  // the names of the fields the collector derived: strings, not skipped over
  const auto& nccl_v = r.raw("nccl_version");
  const std::string confidence = r.one_of("confidence", {"high", "medium", "low"});
  r.finish();

  const std::string what = system_text + ", " + collective + " (" + algo_text + ")";
  auto skip = [&](const std::string& reason) { out.skipped.push_back({id, what, reason}); };

  const CollectiveSystem* sys = nullptr;
  for (const auto& s : kCollectiveSystems)
    if (system_text == s.text) sys = &s;
  if (sys && !sys->system) return skip(sys->reason);
  const auto op = collective_op_spelled(collective);
  if (!op) return skip(collective_spelling_refusal(collective));
  auto algorithm = algorithm_of(algo_text);
  if (!algorithm) return skip("algorithm text '" + algo_text + "' names no single racksim algorithm");
  if (!gpus_v.is_number_integer() || gpus_v.get<int>() < 2)
    return skip("GPU count " + json_excerpt(gpus_v) + " is not one number of ranks");
  const int n = gpus_v.get<int>();

  Measurement m;
  m.id = id;
  m.kind = MeasurementKind::collective;
  m.measured_on = system_text;
  m.op = *op;
  if (sys) {
    m.system = sys->system;
    m.racks = sys->racks;
    for (int g = 0; g < n; ++g) m.gpus.push_back(g);
  } else {
    // A machine the table above does not list: read from its text by the rules public_collectives.json's
    // records use (models/calibration/record_systems.hpp), and predicted but never fitted, since what was
    // read and assumed (nodes, the interconnect) is not the source's word.
    const RecordTarget t = record_target_from_text(system_text, algo_text, notes, n);
    if (!t.reason.empty()) return skip(t.reason + (t.inferred.empty() ? "" : " (" + t.inferred + ")"));
    m.system = t.system;
    m.racks = t.racks;
    m.partitions = t.partitions;
    m.gpus = t.gpus;
    m.nics_assumed = t.nics_assumed;
    m.network_stand_in = t.network_stand_in;
    m.nic_GBps = t.nic_GBps;
    m.placement_known = false;
    m.note = "machine " + t.inferred + "; ";
    // NCCL's NVLS across nodes (racks: NVLink domains) is NVLS-tree for all-reduce; for the other collectives
    // NCCL's own choice, NVLS being unavailable there (settings_of in public_collectives.cpp).
    if (*algorithm == "nvls" && t.racks > 1) algorithm = *op == CollectiveOp::all_reduce ? "nvls_tree" : "auto";
  }
  if (*algorithm == "collnet") {  // NCCL_COLLNET_ENABLE=1, NCCL's choice (models/collectives/nccl_choice.cpp)
    m.collnet_enabled = true;
    algorithm = "auto";
  }
  m.algorithm = *algorithm;
  m.series = system_text + " " + collective + " " + *algorithm + (m.collnet_enabled ? " collnet-on" : "");
  m.source = source;
  m.confidence = confidence;
  m.nccl_version = nccl_v.is_string() ? nccl_v.get<std::string>() : "";
  // A size or a time that is there but is no size or time is the record's fault: skipped, never replaced by the
  // assumed size or by a time derived from a bandwidth (a time of -1 us used to enter the errors as printed).
  if (const std::string fault = size_fault(bytes_v); !fault.empty()) return skip(fault);
  if (bytes_v.is_number()) {
    m.bytes = bytes_v.get<double>();
  } else {  // absent, or a description ("4G-8G"): the stated assumption
    m.bytes = kAssumedPeakCollectiveBytes;
    m.bytes_assumed = true;
    m.note += "size " + (bytes_v.is_string() ? "'" + bytes_v.get<std::string>() + "'" : std::string("not given")) +
              ": evaluated at 8 GiB (assumption); ";
  }
  if (!time_v.is_null() && !plausible_time_us(time_v))
    return skip("time " + json_excerpt(time_v) + " us is not a time in (0, 1e9] us (or null)");
  for (const auto* v : {&busbw_v, &algbw_v})
    if (v->is_number() && !plausible_GBps(*v))
      return skip(std::string(v == &busbw_v ? "busbw " : "algbw ") + json_excerpt(*v) + " GB/s is not a bandwidth in [0, 1e6] GB/s");
  m.note += notes;
  const double factor = busbw_factor(*op, n);
  const auto busbw = number_or_range(busbw_v, nullptr);
  const auto algbw = number_or_range(algbw_v, nullptr);
  if (time_v.is_number() && !m.bytes_assumed) {
    m.time_s = units::us_to_s(time_v.get<double>());
  } else if (busbw && *busbw > 0) {
    m.time_s = m.bytes * factor / units::GBps_to_Bps(*busbw);
    m.time_derived = true;
  } else if (algbw && *algbw > 0) {
    m.time_s = m.bytes / units::GBps_to_Bps(*algbw);
    m.time_derived = true;
  } else {
    return skip("no time and no single bandwidth (busbw " + json_excerpt(busbw_v) + ")");
  }
  m.reported_GBps = busbw ? *busbw : (algbw ? *algbw * factor : 0);
  m.in_place_time_s = in_place_time_s(inplace_v);
  (void)where;
  out.measurements.push_back(std::move(m));
}

void read_probe(JsonObjectReader& r, const std::string& id, MeasurementSet& out) {
  const std::string system_text = r.string("system");
  const std::string probe = r.string("probe");
  const auto& bytes_v = r.raw("bytes");
  const auto& gbps_v = r.raw("GBps");
  const std::string source = r.string("source");
  const std::string notes = r.raw("notes").is_string() ? r.raw("notes").get<std::string>() : "";
  r.strings("derived_fields");  // the names of the fields the collector derived: strings, not skipped over
  const std::string confidence = r.one_of("confidence", {"high", "medium", "low"});
  r.finish();

  const std::string what = system_text + ": " + probe;
  const ProbeRule* rule = nullptr;
  for (const auto& p : kProbeRules)
    if (system_text == p.system_text && starts_with(probe, p.probe_prefix)) {
      rule = &p;
      break;
    }
  if (!rule) {
    out.skipped.push_back({id, what, "no mapping to a racksim system for this record (models/calibration/published_data.cpp)"});
    return;
  }
  if (rule->action == ProbeAction::skip) {
    out.skipped.push_back({id, what, rule->reason});
    return;
  }
  std::string range_note;
  const auto gbps = number_or_range(gbps_v, &range_note);
  if (!gbps || *gbps <= 0) {
    out.skipped.push_back({id, what, "bandwidth " + json_excerpt(gbps_v) + " is not a number"});
    return;
  }
  Measurement m;
  m.id = id;
  m.system = rule->system;
  m.racks = rule->racks;
  m.measured_on = system_text;
  m.source = source;
  m.confidence = confidence;
  m.reported_GBps = *gbps;
  if (const std::string fault = size_fault(bytes_v); !fault.empty()) {
    out.skipped.push_back({id, what, fault});
    return;
  }
  if (bytes_v.is_number()) {
    m.bytes = bytes_v.get<double>();
  } else {
    m.bytes = kAssumedTransferBytes;
    m.bytes_assumed = true;
  }
  m.time_s = m.bytes / units::GBps_to_Bps(*gbps);
  m.time_derived = true;
  std::string note = range_note;
  if (m.bytes_assumed) note += std::string(note.empty() ? "" : "; ") + "bandwidth only: evaluated at 1 GiB (assumption)";
  if (!notes.empty()) note += std::string(note.empty() ? "" : "; ") + notes;
  m.note = note;
  if (rule->action == ProbeAction::transfer) {
    m.kind = MeasurementKind::transfer;
    m.src = rule->src;
    m.dst = rule->dst;
    m.engine = rule->engine_or_op;
    m.series = system_text + " " + m.src + "->" + m.dst + " " + m.engine;
  } else {
    m.kind = MeasurementKind::memory;
    m.src = rule->src;
    std::string op = rule->engine_or_op;
    if (op.empty()) {  // "HBM STREAM-like Copy" -> "copy"
      op = probe.substr(probe.find_last_of(' ') + 1);
      for (auto& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    m.memory_op = op;
    m.series = system_text + " HBM " + op;
  }
  out.measurements.push_back(std::move(m));
}

}  // namespace

std::string default_published_path() {
  return std::string(RACKSIM_CALIBRATION_DIR) + "/data/published_measurements.json";
}

MeasurementSet load_published_measurements(const std::string& path) {
  const nlohmann::json doc = parse_json_file(path);
  if (!doc.is_array()) throw InputError(path, "/", json_excerpt(doc), "a JSON array of measurement records");
  MeasurementSet out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    JsonObjectReader r = array_element(doc, i, path, "");
    const std::string type = r.one_of("record_type", {"collective", "probe"});
    const std::string id = "published#" + std::to_string(i);
    if (type == "collective") read_collective(r, id, path, out);
    else read_probe(r, id, out);
  }
  return out;
}

MeasurementSet load_measurement_records(const std::string& path) {
  const nlohmann::json doc = parse_json_file(path);
  if (doc.is_array())
    for (const auto& r : doc)
      if (r.is_object() && r.contains("gpu_model")) return load_public_collectives(path);
  return load_published_measurements(path);
}

}  // namespace racksim::calibration
