#pragma once
// A directory of named JSON files (topologies/<id>.json, model presets/<id>.json): anywhere a name is
// accepted, a path to a user's own file works too. Shared by SystemCatalog and ModelCatalog.
#include <string>
#include <vector>

namespace racksim {

class NamedJsonFiles {
 public:
  // `kind` names what the files hold in errors ("system", "model"); `file_kind` describes a user file
  // ("a topology JSON file").
  NamedJsonFiles(std::string directory, std::string kind, std::string file_kind);

  // The ids (file stems) of every .json file in the directory, sorted; empty if it does not exist.
  std::vector<std::string> ids() const;
  // The file to load: the argument itself when it looks like a path (has a '/' or ends in .json), else
  // <directory>/<name>.json when it exists. InputError naming `where`, listing the valid ids, otherwise.
  std::string resolve(const std::string& name_or_path, const std::string& where) const;
  const std::string& directory() const { return dir_; }

 private:
  std::string dir_, kind_, file_kind_;
};

}  // namespace racksim
