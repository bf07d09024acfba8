// sim/core/statistics.hpp: the median, the nearest-rank quantile and the error summary of the held-out tables,
// on values whose answers are known by hand.
#include <gtest/gtest.h>

#include "sim/core/statistics.hpp"

namespace racksim {
namespace {

TEST(Statistics, MedianOfOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Statistics, NearestRankQuantileIsAlwaysAValue) {
  const std::vector<double> ten = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_DOUBLE_EQ(nearest_rank_quantile(ten, 0.9), 9);   // rank ceil(9) = 9
  EXPECT_DOUBLE_EQ(nearest_rank_quantile(ten, 0.91), 10); // rank ceil(9.1) = 10
  EXPECT_DOUBLE_EQ(nearest_rank_quantile(ten, 0.5), 5);
  EXPECT_DOUBLE_EQ(nearest_rank_quantile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(nearest_rank_quantile({}, 0.9), 0);
}

TEST(Statistics, ErrorSummaryRoundsEachFigure) {
  const ErrorSummary s = summarize_errors({-0.30001, 0.1, 0.2, -0.05}, 4);
  EXPECT_DOUBLE_EQ(s.median_abs, 0.15);     // |errors| 0.05 0.1 0.2 0.30001: (0.1 + 0.2) / 2
  EXPECT_DOUBLE_EQ(s.p90_abs, 0.3);         // rank ceil(3.6) = 4: 0.30001, rounded
  EXPECT_DOUBLE_EQ(s.worst_abs, 0.3);
  EXPECT_DOUBLE_EQ(s.median_signed, 0.025); // (-0.05 + 0.1) / 2
  EXPECT_DOUBLE_EQ(percent_to_tenth(0.0785), 7.9);
  EXPECT_DOUBLE_EQ(percent_to_tenth(-0.0025), -0.3);
}

}  // namespace
}  // namespace racksim
