#include "sim/calib/calibration.hpp"

#include <algorithm>
#include <filesystem>

#include "models/collectives/collective.hpp"
#include "models/collectives/registry.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/suggest.hpp"

#ifndef RACKSIM_CALIBRATION_DIR
#define RACKSIM_CALIBRATION_DIR "calibrate"
#endif

namespace racksim {

namespace {

constexpr int kCalibrationSchemaVersion = 1;

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

// "op/algo": op one of the collective ops or "*", algo a registry name.
void check_algorithm_key(const std::string& key, const std::string& where, const std::string& pointer) {
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

const LinkCalibration& Calibration::link(LinkKind kind) const {
  static const LinkCalibration identity{1.0, 0.0, "identity (no calibration for this link kind)", {}};
  const auto it = links.find(kind);
  return it == links.end() ? identity : it->second;
}

const AlgorithmCalibration& Calibration::algorithm(const std::string& op_slash_algo) const {
  static const AlgorithmCalibration identity{0.0, 0.0, 1.0, 0.0, "identity (no calibration for this algorithm)", {}};
  auto it = algorithms.find(op_slash_algo);
  if (it != algorithms.end()) return it->second;
  const auto slash = op_slash_algo.find('/');
  if (slash != std::string::npos) {
    it = algorithms.find("*" + op_slash_algo.substr(slash));
    if (it != algorithms.end()) return it->second;
  }
  return identity;
}

namespace {

Calibration calibration_from_json(const nlohmann::json& doc, const std::string& where) {
  JsonObjectReader root(doc, where);
  const long version = root.integer_in("schema_version", 0, 1000000);
  if (version != kCalibrationSchemaVersion)
    root.fail("schema_version", std::to_string(version), std::to_string(kCalibrationSchemaVersion));
  Calibration c;
  c.name = root.string("name");
  if (c.name.empty()) root.fail("name", "\"\"", "a non-empty name echoed into every result");
  c.source = non_empty_source(root);
  if (root.has("links")) {
    JsonObjectReader links = root.object("links");
    for (const auto& [key, value] : doc.at("links").items()) {
      const auto kind = link_kind_from_string(key);
      if (!kind) {
        std::vector<std::string> kinds;
        for (LinkKind k : all_link_kinds()) kinds.push_back(to_string(k));
        throw InputError(where, links.pointer_of(key), "'" + key + "'" + did_you_mean(key, kinds),
                         "a link kind: " + link_kind_list());
      }
      JsonObjectReader r = links.object(key);
      LinkCalibration l;
      l.bandwidth_efficiency = r.number_in_or("bandwidth_efficiency", 1e-6, 1.0, 1.0);
      l.extra_latency_us = r.non_negative_or("extra_latency_us", 0.0);
      l.source = non_empty_source(r);
      l.fit = read_fit(r);
      r.finish();
      c.links[*kind] = l;
    }
    links.finish();
  }
  if (root.has("algorithms")) {
    JsonObjectReader algos = root.object("algorithms");
    for (const auto& [key, value] : doc.at("algorithms").items()) {
      check_algorithm_key(key, where, algos.pointer_of(key));
      JsonObjectReader r = algos.object(key);
      AlgorithmCalibration a;
      a.launch_overhead_us = r.non_negative_or("launch_overhead_us", 0.0);
      a.step_overhead_us = r.non_negative_or("step_overhead_us", 0.0);
      a.bandwidth_efficiency = r.number_in_or("bandwidth_efficiency", 1e-6, 1.0, 1.0);
      a.half_efficiency_bytes = r.non_negative_or("half_efficiency_bytes", 0.0);
      a.source = non_empty_source(r);
      a.fit = read_fit(r);
      r.finish();
      c.algorithms[key] = a;
    }
    algos.finish();
  }
  root.finish();
  return c;
}

}  // namespace

Calibration calibration_from_json_text(const std::string& text, const std::string& where) {
  return calibration_from_json(parse_json_text(text, where), where);
}

Calibration load_calibration(const std::string& path_or_name) {
  if (path_or_name == "none") return Calibration::none();
  const std::string path =
      path_or_name == "default" ? std::string(RACKSIM_CALIBRATION_DIR) + "/default.json" : path_or_name;
  std::error_code ec;
  if (path_or_name != "default" && !std::filesystem::is_regular_file(path, ec))
    throw InputError("--calibration", "", "'" + path_or_name + "' (" + (ec ? ec.message() : "no such file") + ")",
                     "a calibration JSON file, 'default' (the shipped calibration) or 'none' (vendor peaks)");
  return calibration_from_json(parse_json_file(path), path);  // InputError naming the file when bad
}

std::string calibration_to_json_text(const Calibration& c) {
  nlohmann::json doc;
  doc["schema_version"] = kCalibrationSchemaVersion;
  doc["name"] = c.name;
  doc["source"] = c.source;
  nlohmann::json links = nlohmann::json::object();
  for (const auto& [kind, l] : c.links)
    links[to_string(kind)] = {{"bandwidth_efficiency", l.bandwidth_efficiency},
                              {"extra_latency_us", l.extra_latency_us},
                              {"source", l.source}};
  for (const auto& [kind, l] : c.links)
    if (l.fit.points > 0) links[to_string(kind)]["fit"] = fit_json(l.fit);
  nlohmann::json algos = nlohmann::json::object();
  for (const auto& [key, a] : c.algorithms)
    algos[key] = {{"launch_overhead_us", a.launch_overhead_us},
                  {"step_overhead_us", a.step_overhead_us},
                  {"bandwidth_efficiency", a.bandwidth_efficiency},
                  {"half_efficiency_bytes", a.half_efficiency_bytes},
                  {"source", a.source}};
  for (const auto& [key, a] : c.algorithms)
    if (a.fit.points > 0) algos[key]["fit"] = fit_json(a.fit);
  doc["links"] = links;
  doc["algorithms"] = algos;
  return dump_json(doc, 2) + "\n";
}

}  // namespace racksim
