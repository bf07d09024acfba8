#include "sim/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "sim/core/errors.hpp"

namespace racksim {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& path, const std::string& why) {
  throw InputError(option, "", "'" + path + "' (" + why + ")", "a writable file path");
}

// Creates the missing directories above `file`, returning them (outermost first). InputError when a
// component is a regular file or cannot be created.
std::vector<std::string> create_parents(const fs::path& file, const std::string& option, const std::string& shown) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = file.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    const auto st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) refuse(option, shown, p.string() + ": Not a directory");
      break;
    }
    if (ec && ec != std::errc::no_such_file_or_directory) refuse(option, shown, ec.message());
    missing.push_back(p);
  }
  std::vector<std::string> created;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      const std::string why = std::strerror(errno);
      for (auto c = created.rbegin(); c != created.rend(); ++c) ::rmdir(c->c_str());
      refuse(option, shown, "cannot create " + it->string() + ": " + why);
    }
    created.push_back(it->string());
  }
  return created;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string option, bool make_parents)
    : path_(std::move(path)), option_(std::move(option)) {
  if (path_.empty()) throw InputError(option_, "", "'' (an empty path)", "a writable file path");
  const fs::path target(path_);
  if (!target.has_filename() || target.filename() == "." || target.filename() == "..")
    refuse(option_, path_, "names a directory, not a file");
  std::error_code ec;
  if (fs::is_directory(fs::status(target, ec))) refuse(option_, path_, "is a directory");
  if (make_parents) created_dirs_ = create_parents(target, option_, path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  fd_ = ::mkstemp(pattern.data());
  if (fd_ < 0) {
    const std::string why = std::strerror(errno);
    discard();
    refuse(option_, path_, why);
  }
  temp_ = pattern;
  ::fchmod(fd_, 0644);  // mkstemp makes 0600; outputs are ordinary files (the umask is not applied here)
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      option_(std::move(other.option_)),
      temp_(std::move(other.temp_)),
      created_dirs_(std::move(other.created_dirs_)),
      fd_(other.fd_),
      committed_(other.committed_) {
  other.fd_ = -1;
  other.temp_.clear();
  other.created_dirs_.clear();
  other.committed_ = true;
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) ::rmdir(it->c_str());
  created_dirs_.clear();
}

void AtomicFile::write(std::string_view text) {
  if (fd_ < 0) throw InputError(option_, "", "'" + path_ + "'", "a file that is still open for writing");
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      discard();
      refuse(option_, path_, "write failed: " + why);
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw InputError(option_, "", "'" + path_ + "'", "a file that is still open for writing");
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    const std::string why = std::strerror(errno);
    discard();
    refuse(option_, path_, "cannot flush: " + why);
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    discard();
    refuse(option_, path_, "cannot rename into place: " + why);
  }
  temp_.clear();
  created_dirs_.clear();
  committed_ = true;
  // The rename itself is durable once the directory is synced (best effort: some file systems refuse).
  const fs::path dir = fs::path(path_).has_parent_path() ? fs::path(path_).parent_path() : fs::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const std::string& path, std::string_view text, const std::string& option,
                           bool create_parents) {
  AtomicFile file(path, option, create_parents);
  file.write(text);
  file.commit();
}

}  // namespace racksim
