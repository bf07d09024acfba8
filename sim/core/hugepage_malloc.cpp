#include "sim/core/hugepage_malloc.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern char** environ;

namespace racksim {

namespace {
constexpr const char* kTunable = "glibc.malloc.hugetlb";
constexpr const char* kSetting = "glibc.malloc.hugetlb=1";
// Set in the re-executed process: never re-execute twice, whatever GLIBC_TUNABLES reads.
constexpr const char* kDoneVariable = "RACKSIM_HUGEPAGES_SET";
}  // namespace

std::string tunables_with_hugepage_malloc(const char* current) {
  if (current == nullptr || *current == '\0') return kSetting;
  const std::string now = current;
  if (now.find(kTunable) != std::string::npos) return now;
  return now + ":" + kSetting;  // glibc's separator between tunables
}

bool hugepage_malloc_wanted() {
  if (const char* v = std::getenv("RACKSIM_HUGEPAGES"); v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0))
    return false;
  const char* t = std::getenv("GLIBC_TUNABLES");
  return t == nullptr || std::strstr(t, kTunable) == nullptr;
}

SpawnEnvironment environment_for_engine() {
  SpawnEnvironment e;
  const bool add = hugepage_malloc_wanted();
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
    if (add && std::strncmp(*p, "GLIBC_TUNABLES=", 15) == 0) continue;  // replaced below
    e.storage.emplace_back(*p);
  }
  if (add) e.storage.push_back(std::string("GLIBC_TUNABLES=") + tunables_with_hugepage_malloc(std::getenv("GLIBC_TUNABLES")));
  e.envp.reserve(e.storage.size() + 1);
  for (auto& s : e.storage) e.envp.push_back(s.data());
  e.envp.push_back(nullptr);
  return e;
}

void reexec_with_hugepage_malloc(char** argv) {
  if (std::getenv(kDoneVariable) != nullptr || !hugepage_malloc_wanted()) return;
  const std::string tunables = tunables_with_hugepage_malloc(std::getenv("GLIBC_TUNABLES"));
  if (::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0 || ::setenv(kDoneVariable, "1", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): go on without; the tunable set above is harmless here.
}

}  // namespace racksim
