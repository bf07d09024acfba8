// nccl-tests' sizes (src/common.cu setupArgs + each test's getCollByteCount): count = size / element, split
// over the ranks for all_gather, reduce_scatter and alltoall; the size it runs and prints is whole elements.
#include <gtest/gtest.h>

#include "models/collectives/sweep_sizes.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

TEST(NcclTestsSizes, WholeElementsPerRankWhereTheOpSplits) {
  // 1 KiB of floats on 72 ranks: 256 floats, 3 per rank, 216 in all = 864 B (what nccl-tests prints)
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::all_gather, 1024, 4, 72), 864u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::reduce_scatter, 1024, 4, 72), 864u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::all_to_all, 1024, 4, 72), 864u);
  // all_reduce, broadcast, reduce: whole elements only
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::all_reduce, 1024, 4, 72), 1024u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::broadcast, 13, 4, 8), 12u);
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::all_reduce, 5, 8, 8), 0u);
  // powers of two on 8 ranks are already whole
  EXPECT_EQ(nccl_tests_bytes(CollectiveOp::all_gather, 1 << 30, 4, 8), 1u << 30);
  EXPECT_EQ(least_nccl_tests_bytes(CollectiveOp::all_gather, 4, 72), 288u);
  EXPECT_EQ(least_nccl_tests_bytes(CollectiveOp::all_reduce, 2, 72), 2u);
}

TEST(NcclTestsSizes, ASweepDropsSizesBelowOneElementPerRank) {
  const std::vector<std::uint64_t> asked{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  EXPECT_EQ(nccl_tests_sizes(asked, CollectiveOp::all_gather, 4, 72, "--min-bytes"),
            (std::vector<std::uint64_t>{288, 864, 2016, 4032}));
  std::vector<std::uint64_t> left_out;
  nccl_tests_sizes(asked, CollectiveOp::all_gather, 4, 72, "--min-bytes", &left_out);
  EXPECT_EQ(left_out, (std::vector<std::uint64_t>{8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(nccl_tests_sizes(asked, CollectiveOp::all_reduce, 4, 72, "--min-bytes"),
            (std::vector<std::uint64_t>{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  try {
    nccl_tests_sizes({8, 16, 32}, CollectiveOp::all_gather, 4, 72, "--min-bytes");
    FAIL() << "a sweep with no size of one element per rank accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--min-bytes");
    EXPECT_NE(std::string(e.what()).find("288 B"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace racksim
