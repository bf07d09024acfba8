#include "sim/core/hugepage_malloc.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace racksim {

namespace {
constexpr const char* kTunable = "glibc.malloc.hugetlb";
constexpr const char* kSetting = "glibc.malloc.hugetlb=1";
// Set in the re-executed process: never re-execute twice, whatever GLIBC_TUNABLES reads.
constexpr const char* kDoneVariable = "RACKSIM_HUGEPAGES_SET";
// The CLI's own re-executed process also keeps what it frees: blocks up to 32 MiB (glibc's largest
// mmap_threshold) come from the heap instead of a fresh mmap each, and the heap's top is not given back
// below 1 GiB. A planner search builds and drops flow sets of up to 13 MB thousands of times; on huge pages
// each fresh mapping was a 2 MiB page zeroed again (clear_page_erms, 19 % of the DeepSeek-V3 search's
// profile): the search went from 1.40 to 1.15 s (docs/performance.md, session 32). Not for the engine
// processes: a 4 608-GPU run's peak grew 9 % with it and its time did not move. top_pad: a heap is grown
// 64 MiB (virtual) at a time. A thread's arena (the search screens on every core, search.cpp) otherwise grows
// its heap a few pages per call and each growth touched a fresh huge page: the DeepSeek-V3 search without
// comparisons took 6 000-8 000 page faults, 406 with it (2 MiB: 6 500, 16 MiB: 4 900), its CPU 0.67-0.81 ->
// 0.53-0.60 s, peak RSS unchanged (untouched pages are never resident; docs/performance.md, session 36).
constexpr const char* kKeepFreed[] = {"glibc.malloc.mmap_threshold=33554432", "glibc.malloc.trim_threshold=1073741824",
                                      "glibc.malloc.top_pad=67108864"};
}  // namespace

std::string cli_tunables(const char* current) {
  if (current != nullptr && std::strstr(current, kTunable) != nullptr) return current;
  std::string t = tunables_with_hugepage_malloc(current);
  for (const char* setting : kKeepFreed) {
    const std::string name(setting, std::strchr(setting, '=') + 1);  // "glibc.malloc.x=": a user's own is kept
    if (t.find(name) == std::string::npos) t += ":" + std::string(setting);
  }
  return t;
}

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
  const std::string tunables = cli_tunables(std::getenv("GLIBC_TUNABLES"));
  if (::setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0 || ::setenv(kDoneVariable, "1", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): go on without; the tunable set above is harmless here.
}

std::size_t heap_on_huge_pages(std::size_t bytes) {
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  constexpr std::size_t kMaxBytes = std::size_t{1} << 30;  // mallopt takes an int
  if (bytes < kHugePage || bytes > kMaxBytes || !hugepage_malloc_wanted()) return 0;
  // Blocks up to 32 MiB from the heap (a 72-GPU schedule's vectors are 0.2-1 MB: glibc would map each afresh,
  // 4 KiB pages), the top kept `bytes` deep when memory is freed, never trimmed below 1 GiB: as cli_tunables.
  if (::mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || ::mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1 ||
      ::mallopt(M_TOP_PAD, static_cast<int>(bytes)) != 1)
    return 0;
  // Make the heap grow now, by `bytes` and the block that asks: take blocks until the break moves. Only the
  // pages at the old top and of the new top's header are touched; the rest stays unmapped until first use.
  void* const start = ::sbrk(0);
  if (start == reinterpret_cast<void*>(-1)) return 0;
  constexpr std::size_t kBlock = 64 << 10;
  void* blocks[64];
  int taken = 0;
  while (taken < 64 && ::sbrk(0) == start) {
    blocks[taken] = std::malloc(kBlock);
    if (blocks[taken] == nullptr) break;
    ++taken;
  }
  for (int i = taken - 1; i >= 0; --i) std::free(blocks[i]);
  void* const end = ::sbrk(0);
  if (end == reinterpret_cast<void*>(-1) || end <= start) return 0;
  // Past the first touched pages: the first 2 MiB boundary beyond a block of slack, up to the last boundary.
  const std::uintptr_t from = (reinterpret_cast<std::uintptr_t>(start) + kBlock + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t to = reinterpret_cast<std::uintptr_t>(end) & ~(kHugePage - 1);
  if (to <= from || ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) != 0) return 0;
  return to - from;
}

}  // namespace racksim
