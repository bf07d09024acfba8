#include "sim/topo/system_catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/errors.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace fs = std::filesystem;

SystemCatalog::SystemCatalog(std::string topology_dir) : dir_(std::move(topology_dir)) {}

SystemCatalog SystemCatalog::shipped() { return SystemCatalog(RACKSIM_TOPOLOGY_DIR); }

std::vector<std::string> SystemCatalog::ids() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> SystemCatalog::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& id : ids()) out.emplace_back(id, load(id).description);
  return out;
}

TopologySpec SystemCatalog::load(const std::string& name_or_path) const {
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (looks_like_path) return load_topology_file(name_or_path);
  const fs::path shipped = fs::path(dir_) / (name_or_path + ".json");
  if (!name_or_path.empty() && fs::exists(shipped)) return load_topology_file(shipped.string());
  std::string valid;
  for (const auto& id : ids()) valid += (valid.empty() ? "" : ", ") + id;
  throw InputError("system", "", "'" + name_or_path + "' (unknown system)",
                   "one of " + valid + ", or a path to a topology JSON file");
}

}  // namespace racksim
