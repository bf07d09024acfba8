#pragma once
// The shipped model presets (models/workload/presets/*.json) by id, and user files by path: anywhere a
// model name is accepted, a path to a JSON file in the same format works too.
#include <string>
#include <utility>
#include <vector>

#include "models/workload/model_spec.hpp"
#include "sim/core/named_json_files.hpp"

namespace racksim {

class ModelCatalog {
 public:
  explicit ModelCatalog(std::string preset_dir);
  static ModelCatalog shipped();  // models/workload/presets of this source tree

  std::vector<std::string> ids() const;                             // sorted
  std::vector<std::pair<std::string, std::string>> list() const;    // (id, name)
  // A preset id ("deepseek-v3") or a path to a JSON file. Unknown ids: InputError naming `where` and
  // listing the valid ones.
  ModelSpec load(const std::string& name_or_path, const std::string& where = "--model") const;
  const std::string& directory() const { return dir_; }

 private:
  NamedJsonFiles files() const;
  std::string dir_;
};

}  // namespace racksim
