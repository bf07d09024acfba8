#include "sim/core/named_json_files.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/errors.hpp"
#include "sim/core/suggest.hpp"

namespace racksim {

namespace fs = std::filesystem;

NamedJsonFiles::NamedJsonFiles(std::string directory, std::string kind, std::string file_kind)
    : dir_(std::move(directory)), kind_(std::move(kind)), file_kind_(std::move(file_kind)) {}

std::vector<std::string> NamedJsonFiles::ids() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().extension() == ".json") out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string NamedJsonFiles::resolve(const std::string& name_or_path, const std::string& where) const {
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  // The list of shipped ids is read (a directory listing) only for a message: not on the way to a file.
  const auto valid_ids = [this] {
    std::string valid;
    for (const auto& id : ids()) valid += (valid.empty() ? "" : ", ") + id;
    return valid;
  };
  // error_code overloads throughout: a name too long for the file system, or a path through a regular
  // file, is bad input, not a filesystem_error.
  std::error_code ec;
  if (looks_like_path) {
    const auto st = fs::status(name_or_path, ec);
    std::string why;
    if (ec && ec != std::errc::no_such_file_or_directory) why = ec.message();  // too long, not a directory
    else if (st.type() == fs::file_type::not_found) why = "no such file";
    else if (fs::is_directory(st)) why = "a directory";
    else if (!fs::is_regular_file(st)) why = "not a regular file";
    if (!why.empty())
      throw InputError(where, "", "'" + name_or_path + "' (" + why + ")",
                       "one of " + valid_ids() + ", or a path to " + file_kind_);
    return name_or_path;
  }
  const fs::path shipped = fs::path(dir_) / (name_or_path + ".json");
  if (!name_or_path.empty() && fs::is_regular_file(shipped, ec)) return shipped.string();
  throw InputError(where, "", "'" + name_or_path + "' (unknown " + kind_ + ")" + did_you_mean(name_or_path, ids()),
                   "one of " + valid_ids() + ", or a path to " + file_kind_);
}

}  // namespace racksim
