#include "sim/core/private_dir.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits.h>

namespace racksim {

std::string private_runtime_dir() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && (st.st_mode & 077) == 0) return xdg;
  }
  const std::string dir = "/tmp/racksim-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) return "";
  return dir;
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
  return path + '\0' + std::to_string(st.st_ino) + '\0' + std::to_string(st.st_size) + '\0' +
         std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
}

std::string build_identity() {
  std::string identity;
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  const std::string exe_path = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string();
  identity = file_identity(exe_path);
  // The file this function is in: the executable itself (racksim, racksim-engine, the tests) or a shared
  // object loaded into another program (the Python module in python3).
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&build_identity), &info) != 0 && info.dli_fname != nullptr) {
    char resolved[PATH_MAX];
    const std::string code = ::realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
    if (code != exe_path) identity += '\n' + file_identity(code);
  }
  return identity;
}

}  // namespace racksim
