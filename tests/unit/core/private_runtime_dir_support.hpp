#pragma once
// A private runtime directory of a test's own (sim/core/private_dir.hpp): XDG_RUNTIME_DIR points at a fresh
// 0700 directory for the test's life, so that what other processes cached or listen on there is not seen,
// and RACKSIM_PARSE_CACHE is unset (the cache on). Both variables and the directory are put back or removed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace racksim::test {

class ScopedPrivateRuntimeDir {
 public:
  ScopedPrivateRuntimeDir() {
    for (auto& [name, old] : saved_)
      if (const char* v = std::getenv(name)) old = v;
    char pattern[] = "/tmp/racksim-cache-test-XXXXXX";  // mkdtemp makes it 0700, as private_runtime_dir wants
    if (::mkdtemp(pattern) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = pattern;
    ::setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
    ::unsetenv("RACKSIM_PARSE_CACHE");
  }
  ~ScopedPrivateRuntimeDir() {
    for (const auto& [name, old] : saved_) {
      if (old) ::setenv(name, old->c_str(), 1);
      else ::unsetenv(name);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScopedPrivateRuntimeDir(const ScopedPrivateRuntimeDir&) = delete;
  ScopedPrivateRuntimeDir& operator=(const ScopedPrivateRuntimeDir&) = delete;
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
  std::pair<const char*, std::optional<std::string>> saved_[2] = {{"XDG_RUNTIME_DIR", std::nullopt},
                                                                  {"RACKSIM_PARSE_CACHE", std::nullopt}};
};

}  // namespace racksim::test
