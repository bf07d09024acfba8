// The held-out error table (sim/calib/heldout_errors.hpp, models/calibration/heldout_table.hpp): its figures
// from leave-one-system-out predictions worked out by hand, the lookup's widening to a class with enough
// points, the file's strict reading (one case per invalid value), and results carrying it: JSON, table, the
// engine's wire, and a simulation with the shipped calibration (and none without it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/calibration/heldout_table.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/calib/heldout_errors.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/result_wire.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/parsed_file_cache.hpp"
#include "sim/results/results_io.hpp"
#include "../core/private_runtime_dir_support.hpp"
#include "../core/wire_damage_support.hpp"

namespace racksim {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A held-out point of `key` on `system`, predicted `error` off (predicted / measured - 1).
calibration::HeldOutPrediction point(const std::string& system, const std::string& arch, const std::string& key,
                                     int gpus, int domains, double bytes, double error) {
  calibration::HeldOutPrediction p;
  p.fold = "system " + system;
  p.system = system;
  p.arch = arch;
  p.key = key;
  p.gpus = gpus;
  p.domains = domains;
  p.bytes = bytes;
  p.measured_s = 1e-3;
  p.predicted_s = 1e-3 * (1 + error);
  return p;
}

// Ten Blackwell NVLS-tree points across domains at 1 GiB with errors -0.10, -0.09, ..., -0.01 and one ring
// point; nine Hopper NVLS points in one domain (below the ten a class needs).
calibration::CrossValidation sample_cv() {
  calibration::CrossValidation cv;
  cv.by = "system";
  for (int i = 1; i <= 10; ++i)
    cv.predictions.push_back(point(i % 2 ? "gb200-nvl72" : "hgx-b200", "blackwell", "all_reduce/nvls_tree", 16 * i, 2,
                                   1024 * kMiB, -0.01 * i));
  cv.predictions.push_back(point("hgx-b200", "blackwell", "all_reduce/ring", 16, 2, 1024 * kMiB, 0.30));
  for (int i = 1; i <= 9; ++i)
    cv.predictions.push_back(point("hgx-h100", "hopper", "all_reduce/nvls", 8, 1, 64 * kMiB, 0.02 * i));
  return cv;
}

const HeldoutClass* find_class(const HeldoutTable& t, const std::string& arch, const std::string& collective,
                               const std::string& scope, const std::string& size) {
  for (const auto& c : t.classes)
    if (c.arch == arch && c.collective == collective && c.scope == scope && c.size == size) return &c;
  return nullptr;
}

TEST(HeldoutErrors, FiguresOfAClassWorkedOutByHand) {
  const HeldoutTable t = calibration::heldout_table_of(sample_cv());
  EXPECT_EQ(t.min_points, 10);
  const HeldoutClass* c = find_class(t, "blackwell", "all_reduce/nvls_tree", kHeldoutAcrossDomains, ">= 64 MiB");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->error.points, 10);
  // |errors| 0.01 .. 0.10: median (0.05 + 0.06) / 2, 90th percentile by nearest rank the 9th of ten, worst 0.10.
  EXPECT_DOUBLE_EQ(c->error.median_abs, 0.055);
  EXPECT_DOUBLE_EQ(c->error.p90_abs, 0.09);
  EXPECT_DOUBLE_EQ(c->error.worst_abs, 0.1);
  EXPECT_DOUBLE_EQ(c->error.median_signed, -0.055);
  EXPECT_EQ(c->error.systems, (std::vector<std::string>{"gb200-nvl72", "hgx-b200"}));
  EXPECT_EQ(c->error.min_gpus, 16);
  EXPECT_EQ(c->error.max_gpus, 160);
  // The op's class pools the ring point too: 11 points, median |error| 0.06, worst 0.30.
  const HeldoutClass* op = find_class(t, "blackwell", "all_reduce/*", kHeldoutAcrossDomains, ">= 64 MiB");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->error.points, 11);
  EXPECT_DOUBLE_EQ(op->error.median_abs, 0.06);
  EXPECT_DOUBLE_EQ(op->error.worst_abs, 0.3);
  // Every point is in the widest class of its scope and band.
  const HeldoutClass* any = find_class(t, "*", "*", kHeldoutOneDomain, ">= 64 MiB");
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->error.points, 9);
}

TEST(HeldoutErrors, LookupWidensToAClassWithEnoughPoints) {
  HeldoutTable t = calibration::heldout_table_of(sample_cv());
  t = heldout_table_from_json_text(heldout_table_to_json_text(t), "t.json");  // the reader names the classes
  const auto nvls_tree = t.lookup("blackwell", "all_reduce/nvls_tree", true, 2048 * kMiB);
  ASSERT_TRUE(nvls_tree);
  EXPECT_EQ(nvls_tree->class_text, "blackwell all_reduce/nvls_tree, across NVLink domains, >= 64 MiB");
  EXPECT_EQ(nvls_tree->points, 10);
  // The ring has one point of its own: its architecture's all-reduces answer (11 points).
  const auto ring = t.lookup("blackwell", "all_reduce/ring", true, 2048 * kMiB);
  ASSERT_TRUE(ring);
  EXPECT_EQ(ring->class_text, "blackwell all_reduce (any algorithm), across NVLink domains, >= 64 MiB");
  EXPECT_EQ(ring->points, 11);
  // Hopper's nine points answer at no width; nor does a band with no points.
  EXPECT_FALSE(t.lookup("hopper", "all_reduce/nvls", false, 64 * kMiB));
  EXPECT_FALSE(t.lookup("blackwell", "all_reduce/nvls_tree", true, 4096));
  // With a lower threshold the Hopper class answers.
  t.min_points = 9;
  const auto hopper = t.lookup("hopper", "all_reduce/nvls", false, 100 * kMiB);
  ASSERT_TRUE(hopper);
  EXPECT_DOUBLE_EQ(hopper->worst_abs, 0.18);
  EXPECT_NE(hopper->basis.find("calibrate/heldout_errors.json"), std::string::npos);
}

TEST(HeldoutErrors, SizeBandsAndScopes) {
  EXPECT_EQ(heldout_size_band(8), "< 1 MiB");
  EXPECT_EQ(heldout_size_band(kMiB - 1), "< 1 MiB");
  EXPECT_EQ(heldout_size_band(kMiB), "1-64 MiB");
  EXPECT_EQ(heldout_size_band(64 * kMiB - 1), "1-64 MiB");
  EXPECT_EQ(heldout_size_band(64 * kMiB), ">= 64 MiB");
  EXPECT_EQ(heldout_scope(false), "one NVLink domain");
  EXPECT_EQ(heldout_scope(true), "across NVLink domains");
}

TEST(HeldoutErrors, RoundTripsThroughItsFile) {
  const HeldoutTable t = heldout_table_from_json_text(
      heldout_table_to_json_text(calibration::heldout_table_of(sample_cv())), "t.json");
  EXPECT_EQ(heldout_table_from_json_text(heldout_table_to_json_text(t), "t.json"), t);
}

std::string heldout_table_error_of(const std::string& text) {
  try {
    heldout_table_from_json_text(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One valid class, with `field` replaced by `value` (or removed when value is empty).
std::string with_class_field(const std::string& field, const std::string& value) {
  nlohmann::json c = {{"arch", "blackwell"},   {"collective", "all_reduce/ring"}, {"scope", "one NVLink domain"},
                      {"size", ">= 64 MiB"},   {"points", 12},                    {"systems", {"hgx-b200"}},
                      {"gpus", {8, 72}},       {"median_abs", 0.03},              {"p90_abs", 0.08},
                      {"worst_abs", 0.1},      {"median_signed", -0.01}};
  if (value.empty())
    c.erase(field);
  else
    c[field] = nlohmann::json::parse(value);
  nlohmann::json doc = {{"schema_version", 1}, {"basis", "test"}, {"min_points", 10}, {"classes", {c}}};
  return doc.dump();
}

TEST(HeldoutErrors, ValidClassReads) { EXPECT_EQ(heldout_table_error_of(with_class_field("points", "12")), ""); }
TEST(HeldoutErrors, RejectsUnknownArchitecture) {
  EXPECT_NE(heldout_table_error_of(with_class_field("arch", "\"pascal\"")).find("pascal"), std::string::npos);
}
TEST(HeldoutErrors, RejectsUnknownScope) {
  EXPECT_NE(heldout_table_error_of(with_class_field("scope", "\"one rack\"")).find("one rack"), std::string::npos);
}
TEST(HeldoutErrors, RejectsUnknownSizeBand) {
  EXPECT_NE(heldout_table_error_of(with_class_field("size", "\"huge\"")).find("huge"), std::string::npos);
}
TEST(HeldoutErrors, RejectsEmptyCollective) {
  EXPECT_NE(heldout_table_error_of(with_class_field("collective", "\"\"")).find("collective"), std::string::npos);
}
TEST(HeldoutErrors, RejectsZeroPoints) { EXPECT_NE(heldout_table_error_of(with_class_field("points", "0")).find("points"), std::string::npos); }
TEST(HeldoutErrors, RejectsNegativeAbsoluteError) {
  EXPECT_NE(heldout_table_error_of(with_class_field("median_abs", "-0.1")).find("median_abs"), std::string::npos);
}
TEST(HeldoutErrors, RejectsGpuRangeOutOfOrder) {
  EXPECT_NE(heldout_table_error_of(with_class_field("gpus", "[72, 8]")).find("gpus"), std::string::npos);
}
TEST(HeldoutErrors, RejectsNonStringSystem) {
  EXPECT_NE(heldout_table_error_of(with_class_field("systems", "[3]")).find("systems"), std::string::npos);
}
TEST(HeldoutErrors, RejectsMissingField) {
  EXPECT_NE(heldout_table_error_of(with_class_field("p90_abs", "")).find("p90_abs"), std::string::npos);
}
TEST(HeldoutErrors, RejectsUnknownKey) {
  EXPECT_NE(heldout_table_error_of(with_class_field("mean_abs", "0.1")).find("mean_abs"), std::string::npos);
}
TEST(HeldoutErrors, RejectsOtherSchemaVersion) {
  EXPECT_NE(heldout_table_error_of(R"({"schema_version": 2, "basis": "b", "min_points": 10, "classes": []})").find("schema_version"),
            std::string::npos);
}
TEST(HeldoutErrors, RejectsDuplicateClass) {
  nlohmann::json doc = nlohmann::json::parse(with_class_field("points", "12"));
  doc["classes"].push_back(doc["classes"][0]);
  EXPECT_NE(heldout_table_error_of(doc.dump()).find("again"), std::string::npos);
}
TEST(HeldoutErrors, RejectsNonObject) { EXPECT_NE(heldout_table_error_of("[1, 2]").find("held-out"), std::string::npos); }

HeldoutError sample_error() {
  HeldoutError h;
  h.class_text = "hopper all_reduce/nvls, one NVLink domain, >= 64 MiB";
  h.basis = "leave one system out";
  h.points = 54;
  h.systems = {"hgx-h100", "hgx-h200"};
  h.min_gpus = 8;
  h.max_gpus = 8;
  h.median_abs = 0.0133;
  h.p90_abs = 0.0681;
  h.worst_abs = 0.0785;
  h.median_signed = -0.0025;
  return h;
}

TEST(HeldoutErrors, ResultsCarryItInJsonTableAndWire) {
  RunResult r;
  r.system = "hgx-h100";
  r.op = "all_reduce";
  r.algorithm = "nvls";
  r.gpus = 8;
  r.bytes = 1ull << 30;
  EXPECT_TRUE(nlohmann::json::parse(run_result_to_json_text(r))["heldout_error"].is_null());
  EXPECT_EQ(run_result_to_table(r).find("held-out"), std::string::npos);
  r.heldout_error = sample_error();
  const auto j = nlohmann::json::parse(run_result_to_json_text(r))["heldout_error"];
  EXPECT_EQ(j["class"], "hopper all_reduce/nvls, one NVLink domain, >= 64 MiB");
  EXPECT_EQ(j["points"], 54);
  EXPECT_DOUBLE_EQ(j["median_abs_pct"].get<double>(), 1.3);
  EXPECT_DOUBLE_EQ(j["p90_abs_pct"].get<double>(), 6.8);
  EXPECT_DOUBLE_EQ(j["worst_abs_pct"].get<double>(), 7.9);
  EXPECT_DOUBLE_EQ(j["median_signed_pct"].get<double>(), -0.3);
  EXPECT_EQ(j["gpus_measured"], nlohmann::json::parse("[8, 8]"));
  const std::string table = run_result_to_table(r);
  EXPECT_NE(table.find("held-out error: 1.3 % median, 6.8 % 90th percentile, 7.9 % worst (time -0.3 % vs measured, "
                       "median) over 54 point(s) of hopper all_reduce/nvls, one NVLink domain, >= 64 MiB, 8-8 GPUs, on 2 "
                       "system(s) left out of the fit\n"),
            std::string::npos)
      << table;
  r.gpus = 72;
  EXPECT_NE(run_result_to_table(r).find("this run's GPU count is outside that range"), std::string::npos);
  const std::vector<RunResult> back = decode_run_results(encode_run_results({r}));
  ASSERT_EQ(back.size(), 1u);
  ASSERT_TRUE(back[0].heldout_error);
  EXPECT_EQ(*back[0].heldout_error, sample_error());
  r.heldout_error.reset();
  EXPECT_FALSE(decode_run_results(encode_run_results({r}))[0].heldout_error);
}

// The shipped file reads, and the default calibration's lookup answers with the file's own figures.
TEST(HeldoutErrors, ShippedTableAnswersForTheDefaultCalibrationOnly) {
  const HeldoutTable* t = shipped_heldout_table();
  ASSERT_NE(t, nullptr) << "calibrate/heldout_errors.json is missing (racksim validate writes it)";
  std::ifstream in(std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/heldout_errors.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str());
  for (const auto& c : doc["classes"]) {
    if (c["collective"] != "*" || c["arch"] != "*" || c["points"].get<int>() < t->min_points) continue;
    const bool across = c["scope"] == "across NVLink domains";
    const double bytes = c["size"] == "< 1 MiB" ? 1024.0 : c["size"] == "1-64 MiB" ? 4 * kMiB : 1024 * kMiB;
    // An op with no class of its own answers from the widest class of its scope and size.
    const auto h = heldout_error_for(load_calibration("default"), "blackwell", "no_such_op/x", across, bytes);
    ASSERT_TRUE(h) << c.dump();
    EXPECT_EQ(h->points, c["points"].get<int>());
    EXPECT_DOUBLE_EQ(h->median_abs, c["median_abs"].get<double>());
    EXPECT_DOUBLE_EQ(h->worst_abs, c["worst_abs"].get<double>());
  }
  EXPECT_FALSE(heldout_error_for(Calibration::none(), "blackwell", "all_reduce/ring", false, 1024 * kMiB));
  Calibration lab = load_calibration("default");
  lab.name = "lab";
  EXPECT_FALSE(heldout_error_for(lab, "blackwell", "all_reduce/ring", false, 1024 * kMiB));
  // A fit of one's own named "default" is not the shipped calibration: no borrowed figures.
  Calibration own = load_calibration("default");
  ASSERT_FALSE(own.arch_algorithms.empty());
  own.arch_algorithms.begin()->second.begin()->second.bandwidth_efficiency *= 0.9;
  EXPECT_TRUE(is_shipped_calibration(load_calibration("default")));
  EXPECT_FALSE(is_shipped_calibration(own));
  EXPECT_FALSE(heldout_error_for(own, "blackwell", "all_reduce/ring", false, 1024 * kMiB));
}

// A calibration file's text is parsed once per process (RememberedFiles::value_of): the same text read
// again, under another name too, gives the same value; an edited text is parsed anew, never answered from
// the memo (a daemon outlives regenerated files).
TEST(HeldoutErrors, CalibrationTextIsParsedOncePerText) {
  const std::string shipped = std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/default.json";
  std::ifstream in(shipped);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::string needle = "\"bandwidth_efficiency\": ";
  const std::size_t at = text.find(needle);
  ASSERT_NE(at, std::string::npos);
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string same = (dir / "racksim_test_calibration_same.json").string();
  const std::string edited = (dir / "racksim_test_calibration_edited.json").string();
  std::ofstream(same) << text;
  std::string changed = text;  // the first bandwidth efficiency made 0.5
  const std::size_t value = at + needle.size();
  changed.replace(value, text.find_first_of(",\n}", value) - value, "0.5");
  std::ofstream(edited) << changed;
  const Calibration a = load_calibration("default"), b = load_calibration(same), c = load_calibration(edited);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(is_shipped_calibration(b));
  EXPECT_FALSE(is_shipped_calibration(c));  // named "default" too, but not the shipped values
  EXPECT_TRUE(load_calibration(edited) == c);
  std::filesystem::remove(same);
  std::filesystem::remove(edited);
}

// The parsed-file cache's form of the table (heldout_table_from_json_text_cached): the shipped table comes back
// whole, bytes cut short, trailing or damaged are refused (never read past), and a second parse of the same text
// is the first one's entry, decoded; a corrupt entry is parsed instead.
std::string shipped_heldout_text() {
  return read_json_file_text(std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/heldout_errors.json");
}

TEST(HeldoutErrorsCache, EncodingGivesBackTheShippedTable) {
  const HeldoutTable shipped = heldout_table_from_json_text(shipped_heldout_text(), "heldout_errors.json");
  ASSERT_GT(shipped.classes.size(), 10u);
  EXPECT_EQ(decode_heldout_table(encode_heldout_table(shipped)), shipped);
}

TEST(HeldoutErrorsCache, BytesCutShortTrailingOrDamagedAreRefused) {
  const std::string bytes =
      encode_heldout_table(heldout_table_from_json_text(shipped_heldout_text(), "heldout_errors.json"));
  EXPECT_THROW(decode_heldout_table(bytes + "x"), SimulationError);
  EXPECT_THROW(decode_heldout_table(""), SimulationError);
  const int decoded = test::expect_damage_refused_or_whole(
      bytes, [](const HeldoutTable& t) { return encode_heldout_table(t); },
      [](const std::string& b) { return decode_heldout_table(b); }, 97);
  EXPECT_GT(decoded, 0);  // most changes land in numbers and text, which decode to another table
}

TEST(HeldoutErrorsCache, AParseLeavesItsEntryForTheNextProcess) {
  test::ScopedPrivateRuntimeDir runtime;
  const std::string text = shipped_heldout_text();
  const std::string path = parsed_cache_path("heldout-errors", text);
  ASSERT_EQ(path.rfind(runtime.path() + "/parsed-heldout-errors-", 0), 0u) << path;
  EXPECT_FALSE(cached_parse("heldout-errors", text));
  const HeldoutTable parsed = heldout_table_from_json_text_cached(text, "heldout_errors.json");
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(parsed, heldout_table_from_json_text(text, "heldout_errors.json"));
  // What the next call gets is the entry's: a table written under this text's name comes back as written.
  HeldoutTable other = parsed;
  other.min_points = 12345;
  cache_parse("heldout-errors", text, encode_heldout_table(other));
  EXPECT_EQ(heldout_table_from_json_text_cached(text, "heldout_errors.json"), other);
  // A corrupt entry is parsed instead.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "not an entry";
  EXPECT_EQ(heldout_table_from_json_text_cached(text, "heldout_errors.json"), parsed);
}

}  // namespace
}  // namespace racksim
