#pragma once
// The shipped systems (topologies/*.json) by id, and user files by path: anywhere a system name is
// accepted, a path to a JSON file works too.
#include <string>
#include <utility>
#include <vector>

#include "sim/core/named_json_files.hpp"
#include "sim/topo/topology_spec.hpp"

namespace racksim {

class SystemCatalog {
 public:
  // topology_dir: where the shipped files live (the CLI passes the build-time default or --topologies).
  explicit SystemCatalog(std::string topology_dir);
  static SystemCatalog shipped();  // the topologies/ directory of this source tree

  // (id, description) of every shipped system, sorted by id.
  std::vector<std::pair<std::string, std::string>> list() const;
  std::vector<std::string> ids() const;
  // A shipped id ("gb200-nvl72") or a path to a JSON file. Unknown ids: InputError listing the valid ones.
  TopologySpec load(const std::string& name_or_path) const;
  const std::string& directory() const { return dir_; }

 private:
  NamedJsonFiles files() const;
  std::string dir_;
};

// The shipped 8-GPU HGX system of a GPU model as records and published tables name it ("H100" -> "hgx-h100",
// "A100" -> "hgx-a100"), or "" for any other model. One table for every reader of such labels (public
// collective records, published training runs).
std::string hgx_system_of_gpu_model(const std::string& model);
// The models that table knows, in its order.
const std::vector<std::string>& hgx_gpu_models();

}  // namespace racksim
