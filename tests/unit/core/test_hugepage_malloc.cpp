// sim/core/hugepage_malloc: the GLIBC_TUNABLES value racksim's processes start with, and when they do not.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "sim/core/hugepage_malloc.hpp"

namespace racksim {
namespace {

// Restores an environment variable on scope exit.
class SavedVariable {
 public:
  explicit SavedVariable(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) {
      had_ = true;
      value_ = v;
    }
  }
  ~SavedVariable() {
    if (had_) ::setenv(name_, value_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string value_;
};

std::string engine_tunables() {
  const SpawnEnvironment e = environment_for_engine();
  std::string found;
  int count = 0;
  for (const auto& s : e.storage)
    if (s.rfind("GLIBC_TUNABLES=", 0) == 0) {
      found = s.substr(15);
      ++count;
    }
  EXPECT_LE(count, 1) << "GLIBC_TUNABLES set twice";
  EXPECT_EQ(e.envp.size(), e.storage.size() + 1);
  EXPECT_EQ(e.envp.back(), nullptr);
  return found;
}

TEST(HugepageMalloc, TunablesAddedToNothing) {
  EXPECT_EQ(tunables_with_hugepage_malloc(nullptr), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_with_hugepage_malloc(""), "glibc.malloc.hugetlb=1");
}

TEST(HugepageMalloc, TunablesAppendedToOthersWithGlibcsSeparator) {
  EXPECT_EQ(tunables_with_hugepage_malloc("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

TEST(HugepageMalloc, AUsersOwnHugetlbSettingIsKept) {
  EXPECT_EQ(tunables_with_hugepage_malloc("glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(tunables_with_hugepage_malloc("a=1:glibc.malloc.hugetlb=2"), "a=1:glibc.malloc.hugetlb=2");
}

TEST(HugepageMalloc, TheCliAlsoKeepsFreedMemoryUnlessTheUserSaysOtherwise) {
  const std::string keep =
      ":glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864";
  EXPECT_EQ(cli_tunables(nullptr), "glibc.malloc.hugetlb=1" + keep);
  EXPECT_EQ(cli_tunables("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" + keep);
  // a user's own threshold is kept, the others added
  EXPECT_EQ(cli_tunables("glibc.malloc.trim_threshold=0"),
            "glibc.malloc.trim_threshold=0:glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.top_pad=67108864");
  // a user's own hugetlb setting: everything as given (no re-exec happens then either)
  EXPECT_EQ(cli_tunables("glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0");
}

TEST(HugepageMalloc, EngineEnvironmentCarriesTheTunable) {
  SavedVariable t("GLIBC_TUNABLES"), off("RACKSIM_HUGEPAGES");
  ::unsetenv("RACKSIM_HUGEPAGES");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  EXPECT_TRUE(hugepage_malloc_wanted());
  EXPECT_EQ(engine_tunables(), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  ::unsetenv("GLIBC_TUNABLES");
  EXPECT_EQ(engine_tunables(), "glibc.malloc.hugetlb=1");
}

TEST(HugepageMalloc, OffLeavesTheEnvironmentAsItIs) {
  SavedVariable t("GLIBC_TUNABLES"), off("RACKSIM_HUGEPAGES");
  ::unsetenv("GLIBC_TUNABLES");
  for (const char* v : {"off", "0"}) {
    ::setenv("RACKSIM_HUGEPAGES", v, 1);
    EXPECT_FALSE(hugepage_malloc_wanted()) << v;
    EXPECT_EQ(engine_tunables(), "") << v;
  }
  ::setenv("RACKSIM_HUGEPAGES", "on", 1);
  EXPECT_TRUE(hugepage_malloc_wanted());
}

TEST(HugepageMalloc, NotWantedWhenTheTunableIsAlreadySet) {
  SavedVariable t("GLIBC_TUNABLES"), off("RACKSIM_HUGEPAGES");
  ::unsetenv("RACKSIM_HUGEPAGES");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  EXPECT_FALSE(hugepage_malloc_wanted());
  EXPECT_EQ(engine_tunables(), "glibc.malloc.hugetlb=1");
}

// Sanitizers bring their own allocator: glibc's heap, its mallopt and its break are not what malloc uses there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

TEST(HugepageMalloc, HeapOnHugePagesGrowsTheHeapAndAdvisesItsAlignedPart) {
  if (!kGlibcHeap) GTEST_SKIP() << "a sanitizer's allocator, not glibc's heap";
  SavedVariable off("RACKSIM_HUGEPAGES"), tunables("GLIBC_TUNABLES");
  ::unsetenv("RACKSIM_HUGEPAGES");
  ::unsetenv("GLIBC_TUNABLES");
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  char* const before = static_cast<char*>(::sbrk(0));
  const std::size_t advised = heap_on_huge_pages(16 * kMiB);
  char* const after = static_cast<char*>(::sbrk(0));
  // The heap's top is kept 16 MiB deep; what is advised starts past a 64 KiB block of slack at the next 2 MiB
  // boundary and ends at the last one: 16 MiB less at most two huge pages and the slack.
  EXPECT_GE(after - before, static_cast<std::ptrdiff_t>(16 * kMiB - 64 * 1024));
  EXPECT_GE(advised, 12 * kMiB);
  EXPECT_LE(advised, 16 * kMiB);
  EXPECT_EQ(advised % (2 * kMiB), 0U);
  // A block of 1 MiB (glibc's default would map it afresh, above 128 KiB) now comes from that heap: from the
  // old top (up to 64 blocks of 64 KiB were taken below the old break) or above it, below the break.
  void* block = std::malloc(kMiB);
  ASSERT_NE(block, nullptr);
  EXPECT_GE(static_cast<char*>(block), before - 4 * kMiB);
  EXPECT_LT(static_cast<char*>(block), static_cast<char*>(::sbrk(0)));
  std::free(block);
}

TEST(HugepageMalloc, HeapOnHugePagesDoesNothingWhenOffOrTooSmall) {
  SavedVariable off("RACKSIM_HUGEPAGES"), tunables("GLIBC_TUNABLES");
  ::unsetenv("GLIBC_TUNABLES");
  ::setenv("RACKSIM_HUGEPAGES", "off", 1);
  EXPECT_EQ(heap_on_huge_pages(16 << 20), 0U);
  ::unsetenv("RACKSIM_HUGEPAGES");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);  // the re-executed CLI: glibc does it already
  EXPECT_EQ(heap_on_huge_pages(16 << 20), 0U);
  ::unsetenv("GLIBC_TUNABLES");
  EXPECT_EQ(heap_on_huge_pages((2 << 20) - 1), 0U);  // less than one huge page
  EXPECT_EQ(heap_on_huge_pages(std::size_t{2} << 30), 0U);  // more than mallopt's int takes
}

}  // namespace
}  // namespace racksim
