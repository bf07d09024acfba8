#include "sim/topo/system_catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/errors.hpp"
#include "sim/core/named_json_files.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace fs = std::filesystem;

SystemCatalog::SystemCatalog(std::string topology_dir) : dir_(std::move(topology_dir)) {}

SystemCatalog SystemCatalog::shipped() { return SystemCatalog(RACKSIM_TOPOLOGY_DIR); }

std::vector<std::string> SystemCatalog::ids() const { return files().ids(); }

std::vector<std::pair<std::string, std::string>> SystemCatalog::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& id : ids()) out.emplace_back(id, load(id).description);
  return out;
}

TopologySpec SystemCatalog::load(const std::string& name_or_path) const {
  return load_topology_file(files().resolve(name_or_path, "system"));
}

NamedJsonFiles SystemCatalog::files() const { return NamedJsonFiles(dir_, "system", "a topology JSON file"); }

namespace {
const std::vector<std::pair<std::string, std::string>>& hgx_systems() {
  static const std::vector<std::pair<std::string, std::string>> systems{
      {"A100", "hgx-a100"}, {"H100", "hgx-h100"}, {"H200", "hgx-h200"}, {"H800", "hgx-h800"},
      {"H20", "hgx-h20"},   {"B200", "hgx-b200"}, {"B300", "hgx-b300"}};
  return systems;
}
}  // namespace

std::string hgx_system_of_gpu_model(const std::string& model) {
  for (const auto& [m, system] : hgx_systems())
    if (m == model) return system;
  return "";
}

const std::vector<std::string>& hgx_gpu_models() {
  static const std::vector<std::string> models = [] {
    std::vector<std::string> out;
    for (const auto& entry : hgx_systems()) out.push_back(entry.first);
    return out;
  }();
  return models;
}

}  // namespace racksim
