#include "models/calibration/public_collectives.hpp"
#include "models/calibration/published_data.hpp"
#include "models/calibration/record_systems.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <regex>

#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/units.hpp"

#ifndef RACKSIM_CALIBRATION_DIR
#define RACKSIM_CALIBRATION_DIR "calibrate"
#endif

namespace racksim::calibration {

std::string default_public_collectives_path() { return std::string(RACKSIM_CALIBRATION_DIR) + "/data/public_collectives.json"; }

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// Effects a record shows that racksim's model does not represent (Measurement::unmodelled_effect), by rule.
// Two Blackwell ranks forced onto Ring/LL128 run at ~0.6 of what NCCL's own model (and racksim's, which is
// Simple's path at LL128's efficiency) gives them, while three ranks match it: NVIDIA/nccl PR #2343 (B200,
// NCCL 2.31.2: 382-386 GB/s at 1 GiB against a modelled 640; three ranks ~479 GB/s algbw as modelled). Fitted,
// the 2-rank points would pull the in-node LL128 efficiency of every Blackwell ring down.
std::string unmodelled_effect(const std::string& gpu_model, CollectiveOp op, const std::string& algorithm,
                              const std::string& protocol, int gpus, int nodes) {
  const bool blackwell = gpu_model == "B200" || gpu_model == "B300" || gpu_model == "GB200" || gpu_model == "GB300";
  if (blackwell && op == CollectiveOp::all_reduce && algorithm == "ring" && protocol == "LL128" && gpus == 2 && nodes == 1)
    return "two Blackwell ranks on Ring/LL128 run at ~0.6 of the LL128 model that three ranks meet (NVIDIA/nccl PR "
           "#2343), an effect racksim does not represent: validation only";
  // nccl-tests' sendrecv is a ring whose node-boundary flows leave on the last GPU's NIC rail for the next node's
  // first GPU. Together's B200 cluster measured it at 43-44 GB/s on 2-4 nodes, 26 on 8 and 14.6 on 16-64 (its
  // author: fabric contention); racksim routes every flow on its own path with no ECMP collisions, so fitted, the
  // larger runs would pull every point-to-point transfer (the planner's pipeline sends) down.
  if (op == CollectiveOp::send_recv && nodes > 1)
    return "sendrecv across nodes: its ring's node-boundary flows cross NIC rails, and the measured fall with node count "
           "(fabric contention, per the source) is not something racksim's routing represents: validation only";
  return "";
}

// The word after "KEY=" (letters and digits), empty when absent.
std::string value_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  std::string v;
  for (std::size_t i = at + key.size(); i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])); ++i) v += text[i];
  return v;
}

// A setting's small whole number ("NCCL_MIN_CTAS=24"), or nullopt where the text gives none.
std::optional<int> small_int_after(const std::string& text, const std::string& key) {
  const std::string v = value_after(text, key);
  if (v.empty() || v.size() >= 4 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(v);
}

// The NCCL settings the source states.
struct Settings {
  std::string algorithm = "auto", protocol = "auto";
  int channels = 0;
  bool nvls = true;
  std::string reason;
  bool collnet = false;  // NCCL_COLLNET_ENABLE=1
  int ib_qps = 0;        // NCCL_IB_QPS_PER_CONNECTION
};

// `domains`: the NVLink domains the ranks span (NCCL's nodes under MNNVL); `all_reduce`: NVLS across domains
// is NVLS-tree for all-reduce only. NCCL has no NVLS-tree for all-gather or reduce-scatter, and their NVLS
// across domains needs CollNet (nccl_tuner.cpp, tuning.cc), so forced it would fail ("no algorithm/protocol
// available"); a record that has figures there ran what NCCL picks, and is predicted so (auto): Together's
// slinky and MD1 "NVLS" all-gathers across nodes measure the ring's figures (370.97 vs 371.44 GB/s on 16
// GPUs, 323.5 vs 323.9 on 32).
// CollNet (IB SHARP): NCCL_ALGO=CollnetDirect / CollnetChain runs racksim's all_reduce/collnet_direct or
// collnet_chain. A record with CollNet on and no NCCL_ALGO ran NCCL's own choice with collnetEnable, which
// includes NVLS across nodes over CollNet (all_reduce/nvls_collnet, tuning.cc:502-506): predicted as auto
// with CollNet on.
Settings settings_of(const std::string& a, int domains, bool all_reduce) {
  Settings s;
  if (const auto q = small_int_after(a, "NCCL_IB_QPS_PER_CONNECTION=")) s.ib_qps = std::clamp(*q, 1, 128);
  if ((has(a, "CollNet") || has(a, "Collnet") || has(a, "COLLNET")) && !has(a, "COLLNET_ENABLE=0")) {
    std::string lower = value_after(a, "NCCL_ALGO=");
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    s.collnet = true;
    if (has(a, "NVLS_ENABLE=0")) s.nvls = false;
    if (lower.empty()) return s;  // NCCL's choice with CollNet on
    if (lower != "collnetdirect" && lower != "collnetchain") return {"", "", 0, true, "NCCL_ALGO=" + lower + " is not modelled"};
    if (!all_reduce) return {"", "", 0, true, "CollNet all-gather / reduce-scatter (the plugin's iallgather) is not modelled"};
    s.algorithm = lower == "collnetdirect" ? "collnet_direct" : "collnet_chain";
    return s;
  }
  if (has(a, "NET only") || has(a, "NET variant") || has(a, "NET/IB")) return {"", "", 0, true, "NVLink not used (network only)"};
  if (has(a, "NVLS_ENABLE=0") || has(a, "NVLS off")) s.nvls = false;
  if (const std::string v = value_after(a, "NCCL_ALGO="); !v.empty()) {
    std::string lower = v;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "ring" || lower == "tree" || lower == "nvls") s.algorithm = lower;
    else if (lower == "nvlstree") s.algorithm = "nvls_tree";
    else return {"", "", 0, true, "NCCL_ALGO=" + v + " is not modelled"};
  } else if (a.rfind("NVLS (", 0) == 0 || has(a, "(NVLS, per") || a == "default (NVLS)" || has(a, "NVLS on")) {
    if (!has(a, "default")) s.algorithm = "nvls";
  } else if (a.rfind("Ring (", 0) == 0) {
    s.algorithm = "ring";
  }
  if (s.algorithm == "nvls" && domains > 1) s.algorithm = all_reduce ? "nvls_tree" : "auto";  // NCCL's NVLS across nodes
  if (const std::string v = value_after(a, "NCCL_PROTO="); v == "LL" || v == "LL128" || v == "Simple") s.protocol = v;
  if (const auto c = small_int_after(a, "NCCL_MIN_NCHANNELS=")) s.channels = std::min(64, *c);
  // NCCL_MIN_CTAS raises every channel count below it, NVLS's included (transport/nvls.cc:199): taken as the
  // run's channels (racksim's --channels), the count NVLS and NVLS-tree then run on.
  if (const auto c = small_int_after(a, "NCCL_MIN_CTAS=")) s.channels = std::min(64, *c);
  return s;
}

}  // namespace

MeasurementSet load_public_collectives(const std::string& path) {
  MeasurementSet out;
  const auto doc = parse_json_file(path);
  if (!doc.is_array()) throw InputError(path, "", json_excerpt(doc), "an array of records");
  for (std::size_t i = 0; i < doc.size(); ++i) {
    JsonObjectReader r = array_element(doc, i, path, "");
    const std::string id = "public#" + std::to_string(i);
    r.one_of("record_type", {"collective"});
    const std::string system_text = r.string("system");
    const auto& gpus_v = r.raw("gpus");
    const auto& nodes_v = r.raw("nodes");
    const auto& per_node_v = r.raw("gpus_per_node");
    std::string model = canonical_gpu_model(r.string("gpu_model"));
    const std::string net = r.string("interconnect");
    model = rack_model_of(model, system_text + " " + net);  // "B200" on a GB200 NVL72 is the rack's
    const std::string collective = r.string("collective");
    const std::string algo = r.string("algo_if_known");
    const auto& bytes_v = r.raw("bytes");
    const auto& algbw_v = r.raw("algbw_GBps");
    const auto& busbw_v = r.raw("busbw_GBps");
    const auto& time_v = r.raw("time_us");
    const auto& inplace_v = r.raw("inplace");
    const auto& nccl_v = r.raw("nccl_version");
    const std::string source = r.string("source");
    const std::string notes = r.raw("notes").is_string() ? r.raw("notes").get<std::string>() : "";
    const std::string confidence = r.one_of("confidence", {"high", "medium", "low"});
    if (r.has("table_file")) r.raw("table_file");
    r.finish();
    const std::string what = system_text + ", " + collective + " (" + algo + ")";
    auto skip = [&](const std::string& reason) { out.skipped.push_back({id, what, reason}); };
    if (!gpus_v.is_number_integer() || gpus_v.get<int>() < 2) { skip("GPU count " + json_excerpt(gpus_v) + " is not a number of ranks"); continue; }
    const int gpus = gpus_v.get<int>();
    // null where the source does not say; anything else that is not a count is the record's fault, skipped rather
    // than read as one node or an unknown split (and a time that is no time, rather than derived from a bandwidth).
    const auto count_or_null = [](const nlohmann::json& v) { return v.is_null() || (v.is_number_integer() && v.get<long>() >= 1 && v.get<long>() <= (1L << 20)); };
    if (!count_or_null(nodes_v)) { skip("node count " + json_excerpt(nodes_v) + " is neither a number of nodes nor null"); continue; }
    if (!count_or_null(per_node_v)) { skip("GPUs per node " + json_excerpt(per_node_v) + " is neither a count nor null"); continue; }
    if (!time_v.is_null() && !plausible_time_us(time_v)) {
      skip("time " + json_excerpt(time_v) + " us is not a time in (0, 1e9] us (or null)");
      continue;
    }
    if ((busbw_v.is_number() && !plausible_GBps(busbw_v)) || (algbw_v.is_number() && !plausible_GBps(algbw_v))) {
      skip("a bandwidth (busbw " + json_excerpt(busbw_v) + ", algbw " + json_excerpt(algbw_v) + " GB/s) outside [0, 1e6] GB/s");
      continue;
    }
    const int nodes = nodes_v.is_number_integer() ? nodes_v.get<int>() : 1;
    const int per_node = per_node_v.is_number_integer() ? per_node_v.get<int>() : 0;
    // A bug report's numbers (the reporter says the setup underperforms and asks why) measure a fault,
    // not the system: predicting them would need the fault. The collector's notes word it either way
    // ("Underperforming setup", "a misbehaving setup, not a reference": NCCL issue #2409's 1 GiB row was
    // fitted until session 9 and pulled Hopper's NVLS-tree efficiency from ~0.98 to 0.90).
    std::string notes_lower = notes;
    for (char& ch : notes_lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (has(notes_lower, "underperforming setup") || has(notes_lower, "misbehaving setup")) {
      skip("the source reports this setup as underperforming (a fault being debugged)");
      continue;
    }
    const auto op = collective_op_spelled(collective);
    if (!op) { skip(collective_spelling_refusal(collective)); continue; }
    const RecordTarget t = record_target(model, net, algo, notes, gpus, nodes, per_node);
    if (!t.reason.empty()) { skip(t.reason); continue; }
    // NVLink domains: the racks, or with MNNVL off (every tray its own domain) the nodes.
    const int domains = t.partitions.empty() ? t.racks : nodes;
    const Settings s = settings_of(algo, domains, *op == CollectiveOp::all_reduce);
    if (!s.reason.empty()) { skip(s.reason); continue; }
    if (!bytes_v.is_number() || bytes_v.get<double>() < 1) { skip("no message size"); continue; }
    Measurement m;
    m.id = id;
    m.kind = MeasurementKind::collective;
    m.system = t.system;
    m.racks = t.racks;
    m.partitions = t.partitions;
    m.measured_on = system_text;
    m.op = *op;
    m.algorithm = s.algorithm;
    m.protocol = s.protocol;
    m.channels = s.channels;
    m.nvls_enabled = s.nvls;
    m.collnet_enabled = s.collnet;
    m.ib_qps_per_connection = s.ib_qps;
    m.gpus = t.gpus;
    m.bytes = bytes_v.get<double>();
    m.series = system_text + " " + collective + " " + std::to_string(gpus) + " GPUs " + s.algorithm +
               (s.protocol != "auto" ? "/" + s.protocol : "") + (s.nvls ? "" : " nvls-off") + (s.collnet && s.algorithm == "auto" ? " collnet-on" : "") +
               (t.partitions.empty() ? "" : " mnnvl-off");
    m.source = source;
    m.confidence = confidence;
    m.nccl_version = nccl_v.is_string() ? nccl_v.get<std::string>() : "";
    m.note = notes;
    // Kubernetes pods that may share a VM, each given a subset of the NICs: where the ranks are and which
    // NICs they use is not known, so the record is predicted (as placed) but never fitted to.
    m.placement_known = !has(notes, "may share a VM") && !has(net, "subset of NICs");
    m.nics_assumed = t.nics_assumed;
    m.network_stand_in = t.network_stand_in;
    m.nic_GBps = t.nic_GBps;
    m.unmodelled_effect = unmodelled_effect(model, *op, s.algorithm, s.protocol, gpus, nodes);
    const double factor = busbw_factor(*op, gpus);
    if (time_v.is_number() && time_v.get<double>() > 0) {
      m.time_s = units::us_to_s(time_v.get<double>());
    } else if (busbw_v.is_number() && busbw_v.get<double>() > 0) {
      m.time_s = m.bytes * factor / units::GBps_to_Bps(busbw_v.get<double>());
      m.time_derived = true;
    } else if (algbw_v.is_number() && algbw_v.get<double>() > 0) {
      m.time_s = m.bytes / units::GBps_to_Bps(algbw_v.get<double>());
      m.time_derived = true;
    } else {
      skip("no time and no bandwidth");
      continue;
    }
    m.reported_GBps = busbw_v.is_number() ? busbw_v.get<double>() : m.bytes * factor / m.time_s / 1e9;
    m.in_place_time_s = in_place_time_s(inplace_v);
    out.measurements.push_back(std::move(m));
  }
  return out;
}

}  // namespace racksim::calibration
