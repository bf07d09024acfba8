// measurement_spread (collective_fit.hpp): held-out points the model prices alike, measured apart, and the
// floor (slowest - fastest) / (slowest + fastest) that no single prediction gets under for all of them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/calibration/collective_fit.hpp"

namespace racksim::calibration {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

HeldOutPrediction point(const std::string& series, double bytes, double measured_s, double predicted_s,
                        const std::string& system = "hgx-b200", int gpus = 16) {
  HeldOutPrediction h;
  h.fold = "system " + system;
  h.series = series;
  h.system = system;
  h.key = "all_reduce/nvls_tree";
  h.protocol = "Simple";
  h.gpus = gpus;
  h.domains = gpus / 8;
  h.bytes = bytes;
  h.measured_s = measured_s;
  h.predicted_s = predicted_s;
  return h;
}

TEST(MeasurementSpread, TwoRecordsPricedAlikeHaveTheHarmonicMeanFloor) {
  // 1.0 and 1.5 ms for one prediction: the best single p is their harmonic mean, 1.2 ms, off by 0.2 from both.
  const std::vector<HeldOutPrediction> p = {point("cluster A", 1024 * kMiB, 1.0e-3, 1.1e-3),
                                            point("cluster B", 1024 * kMiB, 1.5e-3, 1.1e-3)};
  const MeasurementSpread s = measurement_spread(p);
  EXPECT_EQ(s.groups_large, 1);
  EXPECT_EQ(s.points_large, 2);
  EXPECT_EQ(s.groups_small, 0);
  EXPECT_NEAR(s.worst_large.floor(), 0.2, 1e-12);
  EXPECT_EQ(s.worst_large.series, 2);
  EXPECT_EQ(s.worst_large.what, "hgx-b200 all_reduce/nvls_tree Simple, 16 GPUs in 2 domain(s), 1 GiB");
  EXPECT_EQ(s.large_beyond_15, 1);
  const double harmonic = 2 / (1 / 1.0e-3 + 1 / 1.5e-3);
  EXPECT_NEAR(std::fabs(harmonic / 1.0e-3 - 1), s.worst_large.floor(), 1e-12);
  EXPECT_NEAR(std::fabs(harmonic / 1.5e-3 - 1), s.worst_large.floor(), 1e-12);
}

TEST(MeasurementSpread, DifferentPredictionsSizesOrSystemsAreNotGrouped) {
  const std::vector<HeldOutPrediction> p = {
      point("A", 128 * kMiB, 1.0e-3, 1.0e-3), point("B", 128 * kMiB, 2.0e-3, 1.1e-3),  // the model tells them apart
      point("A", 256 * kMiB, 2.0e-3, 2.0e-3), point("B", 512 * kMiB, 4.0e-3, 2.0e-3),  // other sizes
      point("A", 128 * kMiB, 1.0e-3, 1.0e-3, "hgx-h100"),                               // another system
      point("A", 1 * kMiB, 9.0e-5, 1.0e-4)};                                            // alone
  const MeasurementSpread s = measurement_spread(p);
  EXPECT_EQ(s.groups_large + s.groups_small, 0);
  EXPECT_EQ(s.worst_large.points, 0);
  EXPECT_EQ(s.large_beyond_15, 0);
}

TEST(MeasurementSpread, BandsSplitAt64MiBAndTheHighestFloorIsKept) {
  const std::vector<HeldOutPrediction> p = {
      point("A", 64 * kMiB, 1.00e-3, 1.0e-3), point("B", 64 * kMiB, 1.10e-3, 1.0e-3),    // 0.0476
      point("A", 8 * kMiB, 2.0e-4, 2.0e-4),   point("B", 8 * kMiB, 3.0e-4, 2.0e-4),      // 0.2
      point("C", 8 * kMiB, 2.5e-4, 2.0e-4),                                              // inside the same group
      point("A", 1024 * kMiB, 10e-3, 9e-3),   point("A", 1024 * kMiB, 13e-3, 9e-3)};     // 0.1304, one series
  const MeasurementSpread s = measurement_spread(p);
  EXPECT_EQ(s.groups_small, 1);
  EXPECT_EQ(s.points_small, 3);
  EXPECT_NEAR(s.worst_small.floor(), 0.2, 1e-12);
  EXPECT_EQ(s.worst_small.series, 3);
  EXPECT_EQ(s.groups_large, 2);
  EXPECT_EQ(s.points_large, 4);
  EXPECT_NEAR(s.worst_large.floor(), 3.0 / 23.0, 1e-12);
  EXPECT_EQ(s.worst_large.series, 1);
  EXPECT_EQ(s.large_beyond_15, 0);
}

TEST(MeasurementSpread, EachRecordsTwoTimingsAreAPairOfTheirOwn) {
  std::vector<HeldOutPrediction> p = {point("A", 1024 * kMiB, 10e-3, 9e-3), point("B", 1024 * kMiB, 12e-3, 8e-3),
                                      point("C", 2 * kMiB, 100e-6, 90e-6), point("D", 4 * kMiB, 200e-6, 90e-6)};
  p[0].in_place_s = 9e-3;    // floor 1 / 19
  p[1].in_place_s = 12e-3;   // 0: the same time twice
  p[2].in_place_s = 300e-6;  // 0.5
  // p[3]: no in-place time printed
  const MeasurementSpread s = measurement_spread(p);
  EXPECT_EQ(s.twice_large, 2);
  EXPECT_EQ(s.twice_small, 1);
  EXPECT_NEAR(s.twice_median_large, 0.5 / 19, 1e-12);  // the median of 1/19 and 0
  EXPECT_NEAR(s.twice_worst_large.floor(), 1.0 / 19, 1e-12);
  EXPECT_EQ(s.twice_worst_large.what, "hgx-b200 all_reduce/nvls_tree Simple, 16 GPUs in 2 domain(s), 1 GiB ()");
  EXPECT_NEAR(s.twice_median_small, 0.5, 1e-12);
  EXPECT_NEAR(s.twice_worst_small.lo_s, 100e-6, 1e-18);
  EXPECT_NEAR(s.twice_worst_small.hi_s, 300e-6, 1e-18);
  EXPECT_EQ(s.groups_large + s.groups_small, 0);  // no two records priced alike
}

}  // namespace
}  // namespace racksim::calibration
