// sim/core/hugepage_malloc: the GLIBC_TUNABLES value racksim's processes start with, and when they do not.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace racksim
