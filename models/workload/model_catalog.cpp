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

std::vector<std::string> ModelCatalog::ids() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> ModelCatalog::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& id : ids()) out.emplace_back(id, load(id).name);
  return out;
}

ModelSpec ModelCatalog::load(const std::string& name_or_path, const std::string& where) const {
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (looks_like_path) return load_model_file(name_or_path);
  const fs::path preset = fs::path(dir_) / (name_or_path + ".json");
  if (!name_or_path.empty() && fs::exists(preset)) return load_model_file(preset.string());
  std::string valid;
  for (const auto& id : ids()) valid += (valid.empty() ? "" : ", ") + id;
  throw InputError(where, "", "'" + name_or_path + "' (unknown model)",
                   "one of " + valid + ", or a path to a model JSON file");
}

}  // namespace racksim
