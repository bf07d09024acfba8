#include "models/workload/model_catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/errors.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace fs = std::filesystem;

ModelCatalog::ModelCatalog(std::string preset_dir) : dir_(std::move(preset_dir)) {}

ModelCatalog ModelCatalog::shipped() {
  // The presets sit next to this source file's directory in the tree that RACKSIM_TOPOLOGY_DIR names
  // (<source>/topologies), so no extra build definition is needed.
  return ModelCatalog((fs::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "models" / "workload" / "presets").string());
}

std::vector<std::string> ModelCatalog::ids() const { return files().ids(); }

std::vector<std::pair<std::string, std::string>> ModelCatalog::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& id : ids()) out.emplace_back(id, load(id).name);
  return out;
}

ModelSpec ModelCatalog::load(const std::string& name_or_path, const std::string& where) const {
  return load_model_file(files().resolve(name_or_path, where));
}

NamedJsonFiles ModelCatalog::files() const { return NamedJsonFiles(dir_, "model", "a model JSON file"); }

}  // namespace racksim
