#include "sim/calib/calibration.hpp"

#include "sim/calib/calibration_cache.hpp"

#include <algorithm>
#include <filesystem>

#include "models/collectives/collective.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/remembered_files.hpp"
#include "sim/core/suggest.hpp"
#include "sim/core/units.hpp"

#ifndef RACKSIM_CALIBRATION_DIR
#define RACKSIM_CALIBRATION_DIR "calibrate"
#endif

namespace racksim {

namespace {

constexpr int kCalibrationSchemaVersion = 2;  // 2: entries per GPU architecture ("hopper:nvlink")
// A size in bytes in a calibration entry (a ramp's half-efficiency point, bytes per GPU): at most the largest
// message a rank may send, beyond which the entry could never take effect; larger is a typo.
constexpr double kMaxFileBytes = static_cast<double>(units::kMaxBytesPerRank);

const std::vector<LinkKind>& all_link_kinds() {
  static const std::vector<LinkKind> kinds = {LinkKind::nvlink, LinkKind::c2c, LinkKind::pcie,
                                              LinkKind::cpu_cpu, LinkKind::nic, LinkKind::ib};
  return kinds;
}

std::string link_kind_list() {
  std::string out;
  for (LinkKind k : all_link_kinds()) out += std::string(out.empty() ? "" : ", ") + to_string(k);
  return out;
}

std::string non_empty_source(JsonObjectReader& r) {
  const std::string source = r.string("source");
  if (source.find_first_not_of(" \t") == std::string::npos)
    r.fail("source", "\"\"", "a non-empty text naming where the values come from (a file, a probe, a paper)");
  return source;
}

// Every key a calibration may hold: "op/algo" for each algorithm of the registry, and "*/algo" for each
// algorithm name.
const std::vector<std::string>& calibration_algorithm_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out, star;
    for (const auto& a : algorithm_table()) {
      out.push_back(std::string(to_string(a.op)) + "/" + a.name);
      if (std::find(star.begin(), star.end(), "*/" + a.name) == star.end()) star.push_back("*/" + a.name);
    }
    out.insert(out.end(), star.begin(), star.end());
    return out;
  }();
  return keys;
}

// Splits "arch:rest" (arch one of architecture_names()) into its parts; no prefix gives arch "".
std::pair<std::string, std::string> split_arch(const std::string& key, const std::string& where, const std::string& pointer) {
  const auto colon = key.find(':');
  if (colon == std::string::npos) return {"", key};
  const std::string arch = key.substr(0, colon);
  const auto& names = architecture_names();
  if (std::find(names.begin(), names.end(), arch) == names.end()) {
    std::string allowed;
    for (const auto& a : names) allowed += (allowed.empty() ? "" : ", ") + a;
    throw InputError(where, pointer, "'" + key + "'" + did_you_mean(arch, names),
                     "an architecture prefix among " + allowed + " (e.g. \"hopper:nvlink\")");
  }
  return {arch, key.substr(colon + 1)};
}

// "op/algo": op one of the collective ops or "*", algo a registry name.
void check_algorithm_key(const std::string& full_key, const std::string& where, const std::string& pointer) {
  const std::string key = split_arch(full_key, where, pointer).second;
  const auto slash = key.find('/');
  std::string op = slash == std::string::npos ? "" : key.substr(0, slash);
  std::string algo = slash == std::string::npos ? "" : key.substr(slash + 1);
  bool op_ok = op == "*";
  for (const auto& name : collective_op_names()) op_ok = op_ok || op == name;
  const bool algo_ok = !algo.empty() && algo.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
  if (!op_ok || !algo_ok) {
    std::string ops;
    for (const auto& name : collective_op_names()) ops += name + ", ";
    throw InputError(where, pointer, "'" + key + "'" + did_you_mean(key, calibration_algorithm_keys()),
                     "a key \"op/algorithm\" with op one of " + ops + "or * (e.g. \"all_reduce/ring\", \"*/nvls\")");
  }
  // The algorithm must be one the registry knows for that op (for "*", for some op): a misspelt key
  // ("all_reduce/rign") would otherwise load and silently calibrate nothing.
  const auto& valid = calibration_algorithm_keys();
  if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
    std::string list;
    for (const auto& k : valid) list += (list.empty() ? "" : ", ") + k;
    throw InputError(where, pointer, "'" + key + "' (no such algorithm)" + did_you_mean(key, valid), "one of " + list);
  }
}

FitSummary read_fit(JsonObjectReader& parent) {
  FitSummary f;
  if (!parent.has("fit")) return f;
  JsonObjectReader r = parent.object("fit");
  f.points = static_cast<int>(r.integer_in("points", 1, 100000000));
  f.median_abs_error = r.non_negative("median_abs_error");
  f.worst_abs_error = r.non_negative("worst_abs_error");
  f.rms_log_residual = r.non_negative("rms_log_residual");
  for (const char* key : {"data", "notes"}) {
    const auto& a = r.array(key);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) r.fail(key, json_excerpt(a[i]), "an array of strings");
      (std::string(key) == "data" ? f.data : f.notes).push_back(a[i].get<std::string>());
    }
  }
  r.finish();
  return f;
}

nlohmann::json fit_json(const FitSummary& f) {
  return {{"points", f.points},
          {"median_abs_error", f.median_abs_error},
          {"worst_abs_error", f.worst_abs_error},
          {"rms_log_residual", f.rms_log_residual},
          {"data", f.data},
          {"notes", f.notes}};
}

}  // namespace

std::string architecture_of(int cc) {
  return cc >= 100 ? "blackwell" : cc >= 90 ? "hopper" : cc >= 80 ? "ampere" : "volta";
}

const std::vector<std::string>& architecture_names() {
  static const std::vector<std::string> names = {"volta", "ampere", "hopper", "blackwell"};
  return names;
}

namespace {
// `arch`'s entry for `key`, else the architecture-independent one, else null (links and protocols).
template <class Key, class Entry>
const Entry* own_or_any(const std::map<std::string, std::map<Key, Entry>>& per_arch, const std::map<Key, Entry>& any,
                        const Key& key, const std::string& arch) {
  if (!arch.empty()) {
    const auto a = per_arch.find(arch);
    if (a != per_arch.end()) {
      const auto it = a->second.find(key);
      if (it != a->second.end()) return &it->second;
    }
  }
  const auto it = any.find(key);
  return it != any.end() ? &it->second : nullptr;
}
}  // namespace

const LinkCalibration& Calibration::link(LinkKind kind, const std::string& arch, std::string* borrowed) const {
  static const LinkCalibration identity{1.0, 0.0, "identity (no calibration for this link kind)", {}};
  if (const LinkCalibration* own = own_or_any(arch_links, links, kind, arch)) return *own;
  if (!arch.empty())
    for (auto a = arch_links.rbegin(); a != arch_links.rend(); ++a) {  // another architecture's: borrowed
      const auto jt = a->second.find(kind);
      if (a->first != arch && jt != a->second.end()) {
        if (borrowed) *borrowed = a->first;
        return jt->second;
      }
    }
  return identity;
}

const std::vector<std::string>& protocol_names() {
  static const std::vector<std::string> names = {"LL", "LL128", "Simple"};
  return names;
}

const ProtocolCalibration& Calibration::protocol(const std::string& name, const std::string& arch) const {
  static const ProtocolCalibration identity{1.0, "identity (no calibration for this protocol)", {}};
  const ProtocolCalibration* own = own_or_any(arch_protocols, protocols, name, arch);
  return own != nullptr ? *own : identity;
}

const std::vector<std::string>& memory_kinds() {
  static const std::vector<std::string> kinds = {"hbm"};
  return kinds;
}

const LinkCalibration& Calibration::hbm() const {
  static const LinkCalibration identity{1.0, 0.0, "identity (no calibration of device memory: the topology's HBM bandwidth)", {}};
  const auto it = memory.find("hbm");
  return it != memory.end() ? it->second : identity;
}

namespace {
const AlgorithmCalibration* find_algorithm_entry(const std::map<std::string, AlgorithmCalibration>& map,
                                                 const std::string& op_slash_algo) {
  auto it = map.find(op_slash_algo);
  if (it != map.end()) return &it->second;
  const auto slash = op_slash_algo.find('/');
  if (slash != std::string::npos) {
    it = map.find("*" + op_slash_algo.substr(slash));
    if (it != map.end()) return &it->second;
  }
  return nullptr;
}
}  // namespace

namespace {
// Every field at its default (no overhead, efficiency 1, no ramp, nothing borrowed): only the source is said.
const AlgorithmCalibration kIdentityAlgorithm = [] {
  AlgorithmCalibration a;
  a.source = "identity (no calibration for this algorithm)";
  return a;
}();
}  // namespace

bool Calibration::calibrates(const std::string& op_slash_algo, const std::string& arch) const {
  return &algorithm(op_slash_algo, arch) != &kIdentityAlgorithm;
}

const AlgorithmCalibration& Calibration::algorithm(const std::string& op_slash_algo, const std::string& arch,
                                                   std::string* borrowed) const {
  if (!arch.empty()) {
    const auto a = arch_algorithms.find(arch);
    if (a != arch_algorithms.end())
      if (const auto* e = find_algorithm_entry(a->second, op_slash_algo)) {
        if (borrowed && !e->borrowed_from.empty()) *borrowed = e->borrowed_from;
        return *e;
      }
  }
  if (const auto* e = find_algorithm_entry(algorithms, op_slash_algo)) return *e;
  if (!arch.empty())
    for (auto a = arch_algorithms.rbegin(); a != arch_algorithms.rend(); ++a)
      if (a->first != arch)
        if (const auto* e = find_algorithm_entry(a->second, op_slash_algo)) {
          if (borrowed) *borrowed = a->first;
          return *e;
        }
  return kIdentityAlgorithm;
}

namespace {

// A link's (or device memory's) entry: its efficiency against the vendor peak and the latency it adds.
LinkCalibration read_link(JsonObjectReader& r) {
  LinkCalibration l;
  l.bandwidth_efficiency = r.number_in_or("bandwidth_efficiency", 1e-6, 1.0, 1.0);
  l.extra_latency_us = r.number_in_or("extra_latency_us", 0, kMaxLatency_us, 0.0);
  l.source = non_empty_source(r);
  l.fit = read_fit(r);
  r.finish();
  return l;
}

Calibration calibration_from_json(const nlohmann::json& doc, const std::string& where) {
  JsonObjectReader root(doc, where);
  const long version = root.integer_in("schema_version", 0, 1000000);
  if (version != 1 && version != kCalibrationSchemaVersion)  // 1: the same keys, without architectures
    root.fail("schema_version", std::to_string(version), "1 or " + std::to_string(kCalibrationSchemaVersion));
  Calibration c;
  c.name = root.string("name");
  if (c.name.empty()) root.fail("name", "\"\"", "a non-empty name echoed into every result");
  c.source = non_empty_source(root);
  if (root.has("links")) {
    JsonObjectReader links = root.object("links");
    for (const auto& [key, value] : doc.at("links").items()) {
      const auto [arch, kind_name] = split_arch(key, where, links.pointer_of(key));
      const auto kind = link_kind_from_string(kind_name);
      if (!kind) {
        std::vector<std::string> kinds;
        for (LinkKind k : all_link_kinds()) kinds.push_back(to_string(k));
        throw InputError(where, links.pointer_of(key), "'" + key + "'" + did_you_mean(kind_name, kinds),
                         "a link kind (" + link_kind_list() + "), optionally after an architecture (\"hopper:nvlink\")");
      }
      JsonObjectReader r = links.object(key);
      (arch.empty() ? c.links : c.arch_links[arch])[*kind] = read_link(r);
    }
    links.finish();
  }
  if (root.has("memory")) {
    JsonObjectReader memory = root.object("memory");
    for (const auto& [key, value] : doc.at("memory").items()) {
      const auto& kinds = memory_kinds();
      if (std::find(kinds.begin(), kinds.end(), key) == kinds.end())
        throw InputError(where, memory.pointer_of(key), "'" + key + "'" + did_you_mean(key, kinds),
                         "a kind of device memory (" + comma_list(kinds) + ")");
      JsonObjectReader r = memory.object(key);
      c.memory[key] = read_link(r);
    }
    memory.finish();
  }
  if (root.has("algorithms")) {
    JsonObjectReader algos = root.object("algorithms");
    for (const auto& [key, value] : doc.at("algorithms").items()) {
      check_algorithm_key(key, where, algos.pointer_of(key));
      JsonObjectReader r = algos.object(key);
      AlgorithmCalibration a;
      a.launch_overhead_us = r.number_in_or("launch_overhead_us", 0, kMaxLatency_us, 0.0);
      a.launch_us_per_8_gpus = r.number_in_or("launch_us_per_8_gpus", 0, kMaxLatency_us, 0.0);
      // Until session 33 the launch across domains was one figure per collective; it is now per 8 GPUs of each
      // domain (AlgorithmCalibration), so a file with the old key would be read 8x off on a rack: refused.
      if (r.has("scale_out_launch_overhead_us"))
        r.fail("scale_out_launch_overhead_us", value.at("scale_out_launch_overhead_us").dump(),
               "scale_out_launch_us_per_8_gpus (the launch across domains is now per 8 GPUs of each domain; refit with "
               "racksim calibrate fit, or divide by the domain's GPUs / 8)");
      if (r.has("scale_out_launch_us_per_8_gpus"))
        a.scale_out_launch_us_per_8_gpus = r.number_in_or("scale_out_launch_us_per_8_gpus", 0, kMaxLatency_us, 0.0);
      if (r.has("scale_out_hop_overhead_us")) a.scale_out_hop_overhead_us = r.number_in_or("scale_out_hop_overhead_us", 0, kMaxLatency_us, 0.0);
      a.step_overhead_us = r.number_in_or("step_overhead_us", 0, kMaxLatency_us, 0.0);
      // Relative to racksim's model of the algorithm (the links at their calibration and NCCL's caps): may
      // exceed 1 where NCCL beats its own tuning model (NVLS on 8 B200s: 844 GB/s against 829).
      a.bandwidth_efficiency = r.number_in_or("bandwidth_efficiency", 1e-6, 2.0, 1.0);
      a.half_efficiency_bytes = r.number_in_or("half_efficiency_bytes", 0, kMaxFileBytes, 0.0);
      a.ramp_bytes_per_gpu = r.number_in_or("ramp_bytes_per_gpu", 0, kMaxFileBytes, 0.0);
      a.p2p_pipeline_GBps = r.number_in_or("p2p_pipeline_GBps", 0, kMaxBandwidth_GBps, 0.0);
      a.qp_line_fraction = r.number_in_or("qp_line_fraction", 0, 1.0, 0.0);  // a queue pair moves at most its NIC's line rate
      a.ring_copy_GBps = r.number_in_or("ring_copy_GBps", 0, kMaxBandwidth_GBps, 0.0);
      if (r.has("borrowed_from")) {
        a.borrowed_from = r.string("borrowed_from");
        const auto& names = architecture_names();
        if (std::find(names.begin(), names.end(), a.borrowed_from) == names.end()) {
          std::string allowed;
          for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
          r.fail("borrowed_from", "'" + a.borrowed_from + "'", "an architecture (" + allowed + ")");
        }
      }
      a.source = non_empty_source(r);
      a.fit = read_fit(r);
      r.finish();
      const auto [arch, algo_key] = split_arch(key, where, algos.pointer_of(key));
      (arch.empty() ? c.algorithms : c.arch_algorithms[arch])[algo_key] = a;
    }
    algos.finish();
  }
  if (root.has("protocols")) {
    JsonObjectReader protos = root.object("protocols");
    for (const auto& [key, value] : doc.at("protocols").items()) {
      const auto [arch, name] = split_arch(key, where, protos.pointer_of(key));
      const auto& names = protocol_names();
      if (std::find(names.begin(), names.end(), name) == names.end())
        throw InputError(where, protos.pointer_of(key), "'" + key + "'" + did_you_mean(name, names),
                         "one of NCCL's protocols (LL, LL128, Simple), optionally after an architecture (\"blackwell:LL128\")");
      JsonObjectReader r = protos.object(key);
      ProtocolCalibration pc;
      pc.network_efficiency = r.number_in_or("network_efficiency", 1e-6, 1.0, 1.0);
      pc.source = non_empty_source(r);
      pc.fit = read_fit(r);
      r.finish();
      (arch.empty() ? c.protocols : c.arch_protocols[arch])[name] = pc;
    }
    protos.finish();
  }
  root.finish();
  return c;
}

}  // namespace

Calibration calibration_from_json_text(const std::string& text, const std::string& where) {
  return calibration_from_json(parse_json_text(text, where), where);
}

namespace {
RememberedFiles<Calibration>& calibration_files_read() {
  static RememberedFiles<Calibration> files;
  return files;
}
}  // namespace

Calibration load_calibration(const std::string& path_or_name) {
  if (path_or_name == "none") return Calibration::none();
  const std::string path =
      path_or_name == "default" ? std::string(RACKSIM_CALIBRATION_DIR) + "/default.json" : path_or_name;
  std::error_code ec;
  if (path_or_name != "default" && !std::filesystem::is_regular_file(path, ec))
    throw InputError("--calibration", "", "'" + path_or_name + "' (" + (ec ? ec.message() : "no such file") + ")",
                     "a calibration JSON file, 'default' (the shipped calibration) or 'none' (vendor peaks)");
  std::string text = read_json_file_text(path);
  // Parsed before in this process, else by an earlier one of this build (sim/calib/calibration_cache.hpp).
  return calibration_files_read().value_for(std::move(text), cached_calibration, cache_calibration,
                                            [&](const std::string& json) {  // InputError naming the file when bad
                                              return calibration_from_json(parse_json_text(json, path), path);
                                            });
}

std::string calibration_json_text_of(const Calibration& calibration) {
  if (auto text = calibration_files_read().text_of(calibration)) return std::move(*text);
  return calibration_to_json_text(calibration);
}

std::string calibration_to_json_text(const Calibration& c) {
  nlohmann::json doc;
  doc["schema_version"] = kCalibrationSchemaVersion;
  doc["name"] = c.name;
  doc["source"] = c.source;
  nlohmann::json links = nlohmann::json::object();
  auto link_json = [](const LinkCalibration& l) {
    nlohmann::json j = {{"bandwidth_efficiency", l.bandwidth_efficiency}, {"extra_latency_us", l.extra_latency_us}, {"source", l.source}};
    if (l.fit.points > 0) j["fit"] = fit_json(l.fit);
    return j;
  };
  for (const auto& [kind, l] : c.links) links[to_string(kind)] = link_json(l);
  for (const auto& [arch, m] : c.arch_links)
    for (const auto& [kind, l] : m) links[arch + ":" + to_string(kind)] = link_json(l);
  nlohmann::json algos = nlohmann::json::object();
  auto put_algo = [&](const std::string& key, const AlgorithmCalibration& a) {
    algos[key] = {{"launch_overhead_us", a.launch_overhead_us},
                  {"step_overhead_us", a.step_overhead_us},
                  {"bandwidth_efficiency", a.bandwidth_efficiency},
                  {"half_efficiency_bytes", a.half_efficiency_bytes},
                  {"source", a.source}};
    if (a.launch_us_per_8_gpus > 0) algos[key]["launch_us_per_8_gpus"] = a.launch_us_per_8_gpus;
    if (a.scale_out_launch_us_per_8_gpus >= 0) algos[key]["scale_out_launch_us_per_8_gpus"] = a.scale_out_launch_us_per_8_gpus;
    if (a.scale_out_hop_overhead_us >= 0) algos[key]["scale_out_hop_overhead_us"] = a.scale_out_hop_overhead_us;
    if (a.ramp_bytes_per_gpu > 0) algos[key]["ramp_bytes_per_gpu"] = a.ramp_bytes_per_gpu;
    if (a.p2p_pipeline_GBps > 0) algos[key]["p2p_pipeline_GBps"] = a.p2p_pipeline_GBps;
    if (a.qp_line_fraction > 0) algos[key]["qp_line_fraction"] = a.qp_line_fraction;
    if (a.ring_copy_GBps > 0) algos[key]["ring_copy_GBps"] = a.ring_copy_GBps;
    if (!a.borrowed_from.empty()) algos[key]["borrowed_from"] = a.borrowed_from;
    if (a.fit.points > 0) algos[key]["fit"] = fit_json(a.fit);
  };
  for (const auto& [key, a] : c.algorithms) put_algo(key, a);
  for (const auto& [arch, m] : c.arch_algorithms)
    for (const auto& [key, a] : m) put_algo(arch + ":" + key, a);
  doc["links"] = links;
  // Written only when there is one: a calibration without device memory keeps its text.
  if (!c.memory.empty()) {
    nlohmann::json memory = nlohmann::json::object();
    for (const auto& [key, l] : c.memory) memory[key] = link_json(l);
    doc["memory"] = memory;
  }
  doc["algorithms"] = algos;
  nlohmann::json protos = nlohmann::json::object();
  auto put_protocol = [&](const std::string& key, const ProtocolCalibration& pc) {
    protos[key] = {{"network_efficiency", pc.network_efficiency}, {"source", pc.source}};
    if (pc.fit.points > 0) protos[key]["fit"] = fit_json(pc.fit);
  };
  for (const auto& [name, pc] : c.protocols) put_protocol(name, pc);
  for (const auto& [arch, m] : c.arch_protocols)
    for (const auto& [name, pc] : m) put_protocol(arch + ":" + name, pc);
  // Written only when there is one: a calibration without protocol entries keeps its text.
  if (!protos.empty()) doc["protocols"] = protos;
  return dump_json(doc, 2) + "\n";
}

}  // namespace racksim
