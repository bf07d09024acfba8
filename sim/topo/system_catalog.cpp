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

}  // namespace racksim
