// The parsed-calibration cache (sim/calib/calibration_cache.hpp): its binary form gives back every field of
// a calibration, bytes cut short or trailing are refused, and an entry is used only for the very text it
// was made from, by this build, whole; anything else (corrupt, another text under the same name, the cache
// turned off) is parsed as before. Each test works in a private directory of its own (XDG_RUNTIME_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "sim/calib/calibration.hpp"
#include "sim/calib/calibration_cache.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "../core/private_runtime_dir_support.hpp"
#include "../core/wire_damage_support.hpp"

namespace racksim {
namespace {

// A calibration with every field away from its default, so that a field the encoding left out would come
// back different.
Calibration every_field_set() {
  FitSummary fit;
  fit.points = 7;
  fit.median_abs_error = 0.03;
  fit.worst_abs_error = 0.09;
  fit.rms_log_residual = 0.05;
  fit.data = {"series A (https://example.org/a)", "series B"};
  fit.notes = {"kappa pulled toward 1"};
  LinkCalibration link{0.87, 0.25, "p2p probe", fit};
  AlgorithmCalibration algo;
  algo.launch_overhead_us = 6.5;
  algo.step_overhead_us = 0.7;
  algo.bandwidth_efficiency = 0.93;
  algo.half_efficiency_bytes = 1 << 20;
  algo.source = "racksim calibrate fit";
  algo.fit = fit;
  algo.launch_us_per_8_gpus = 1.606;
  algo.scale_out_launch_us_per_8_gpus = 83.86;
  algo.scale_out_hop_overhead_us = 0.8;
  algo.ramp_bytes_per_gpu = 2e6;
  algo.borrowed_from = "hopper";
  algo.p2p_pipeline_GBps = 70;
  algo.qp_line_fraction = 0.4244;
  algo.ring_copy_GBps = 1500;
  Calibration c;
  c.name = "lab";
  c.source = "probes on the lab machine";
  c.links[LinkKind::nvlink] = link;
  c.links[LinkKind::ib] = LinkCalibration{0.95, 1.5, "ib probe", {}};
  c.algorithms["all_reduce/ring"] = algo;
  c.algorithms["*/tree"] = AlgorithmCalibration{};
  c.arch_links["blackwell"][LinkKind::c2c] = link;
  c.arch_algorithms["blackwell"]["all_reduce/nvls"] = algo;
  c.arch_algorithms["hopper"]["*/ring"] = algo;
  c.memory["hbm"] = LinkCalibration{0.92, 4.7, "D2D copy probe", fit};
  return c;
}

std::string shipped_text() { return read_json_file_text(std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/default.json"); }

TEST(CalibrationCache, EncodingGivesBackEveryField) {
  const Calibration c = every_field_set();
  EXPECT_EQ(decode_calibration(encode_calibration(c)), c);
  // The fixture has what it claims: each part differs from a default calibration.
  EXPECT_NE(c.algorithms.at("all_reduce/ring"), AlgorithmCalibration{});
  EXPECT_NE(c.links.at(LinkKind::nvlink), LinkCalibration{});
}

TEST(CalibrationCache, EncodingGivesBackTheShippedCalibration) {
  const Calibration shipped = calibration_from_json_text(shipped_text(), "default.json");
  EXPECT_EQ(decode_calibration(encode_calibration(shipped)), shipped);
}

TEST(CalibrationCache, BytesCutShortOrTrailingAreRefused) {
  const std::string bytes = encode_calibration(every_field_set());
  EXPECT_THROW(decode_calibration(bytes.substr(0, bytes.size() - 1)), SimulationError);
  EXPECT_THROW(decode_calibration(bytes.substr(0, 10)), SimulationError);
  EXPECT_THROW(decode_calibration(bytes + "x"), SimulationError);
  EXPECT_THROW(decode_calibration(""), SimulationError);
}

// Whatever bytes an entry holds, decoding refuses them or gives a calibration, never reads past them: every
// prefix of a real encoding (every 97th length and the last 64) is refused, and 2 000 single-byte changes
// (a fixed seed) are refused or decode to a value that comes back whole from its own encoding (a flag byte of 5 reads as
// true and is written as 1).
TEST(CalibrationCache, DamagedBytesAreRefusedNeverOverread) {
  const std::string bytes = encode_calibration(calibration_from_json_text(shipped_text(), "default.json"));
  const int decoded = test::expect_damage_refused_or_whole(
      bytes, [](const auto& v) { return encode_calibration(v); }, [](const std::string& b) { return decode_calibration(b); }, 97);
  EXPECT_GT(decoded, 0);  // most changes land in numbers and text, which decode to another value
}

// A private runtime directory of the test's own, so that entries from other processes are not seen.
class CalibrationCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = runtime_.path();
    // A text no other test reads (RememberedFiles would answer it in this process without the cache).
    text_ = shipped_text();
    text_.insert(text_.find('{') + 1, "\n  ");
    file_ = dir_ + "/cal.json";
    std::ofstream(file_) << text_;
  }
  test::ScopedPrivateRuntimeDir runtime_;
  std::string dir_, text_, file_;
};

TEST_F(CalibrationCacheDir, ALoadLeavesTheParseForTheNextProcess) {
  const std::string path = calibration_cache_path(text_);
  ASSERT_EQ(path.rfind(dir_ + "/parsed-calibration-", 0), 0u) << path;
  EXPECT_FALSE(cached_calibration(text_));
  const Calibration loaded = load_calibration(file_);
  ASSERT_TRUE(std::filesystem::exists(path));
  const std::optional<Calibration> cached = cached_calibration(text_);
  ASSERT_TRUE(cached);
  EXPECT_EQ(*cached, loaded);
  EXPECT_EQ(*cached, calibration_from_json_text(text_, "cal.json"));
}

TEST_F(CalibrationCacheDir, ACorruptEntryIsParsedInstead) {
  cache_calibration(text_, every_field_set());
  const std::string path = calibration_cache_path(text_);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 3);  // cut short
  EXPECT_FALSE(cached_calibration(text_));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not an entry";
  EXPECT_FALSE(cached_calibration(text_));
}

TEST_F(CalibrationCacheDir, AnEntryIsUsedOnlyForItsOwnText) {
  const std::string other = text_ + " ";
  cache_calibration(other, every_field_set());
  // The entry made for `other`, put where `text_`'s would be (a hash collision): compared whole, refused.
  std::filesystem::copy_file(calibration_cache_path(other), calibration_cache_path(text_),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_FALSE(cached_calibration(text_));
  ASSERT_TRUE(cached_calibration(other));
  EXPECT_EQ(*cached_calibration(other), every_field_set());
}

TEST_F(CalibrationCacheDir, TurnedOffNothingIsReadOrWritten) {
  cache_calibration(text_, every_field_set());
  ASSERT_TRUE(cached_calibration(text_));
  ::setenv("RACKSIM_PARSE_CACHE", "off", 1);
  EXPECT_EQ(calibration_cache_path(text_), "");
  EXPECT_FALSE(cached_calibration(text_));
  cache_calibration(text_ + "  ", every_field_set());
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    if (e.path().filename().string().rfind("parsed-", 0) == 0) ++entries;
  EXPECT_EQ(entries, 1u);
}

}  // namespace
}  // namespace racksim
