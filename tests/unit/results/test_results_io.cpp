// RunResult writers: the CLI's JSON contract, nccl-tests' table layout, CSV and the Chrome trace.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/results/results_io.hpp"

namespace racksim {
namespace {

RunResult sample_result() {
  RunResult r;
  r.system = "gb200-nvl72";
  r.racks = 1;
  r.op = "all_reduce";
  r.algorithm = "ring";
  r.gpus = 8;
  r.bytes = 1ull << 30;
  r.time_s = 2.09441132e-3;
  r.algbw_Bps = static_cast<double>(r.bytes) / r.time_s;
  r.busbw_Bps = r.algbw_Bps * 2 * 7 / 8;
  r.phases = {{"reduce-scatter", 1.04720566e-3}, {"all-gather", 1.04720566e-3}};
  r.links = {{"r0.t0.gpu0.nvlink-port", "nvlink", 3.5 * (1ull << 30), 2.09e-3, 1.0},
             {"r0.t0.gpu1.nvlink-port", "nvlink", 3.5 * (1ull << 30), 2.09e-3, 0.999},
             {"r0.t0.gpu0-nic0", "pcie", 1000, 1e-6, 0.25}};
  r.trace = {{"r0.t0.gpu0", "reduce-scatter: task 0", 0, 1e-4}, {"link r0.t0.gpu0.nvlink-port", "busy", 0, 2e-3}};
  r.calibration = "none";
  r.failures = {"switch-tray:0"};
  return r;
}

TEST(ResultsIo, JsonFollowsTheCliContract) {
  const auto j = nlohmann::json::parse(run_result_to_json_text(sample_result()));
  for (const char* key : {"system", "racks", "op", "algo", "gpus", "bytes", "time_us", "algbw_GBps", "busbw_GBps",
                          "phases", "links", "calibration", "failures", "algo_note", "chunk_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["system"], "gb200-nvl72");
  EXPECT_EQ(j["algo"], "ring");
  EXPECT_EQ(j["bytes"], 1073741824);
  EXPECT_DOUBLE_EQ(j["time_us"].get<double>(), 2094.41);
  EXPECT_DOUBLE_EQ(j["algbw_GBps"].get<double>(), 512.67);
  EXPECT_DOUBLE_EQ(j["busbw_GBps"].get<double>(), 897.172);
  EXPECT_EQ(j["phases"][0]["name"], "reduce-scatter");
  EXPECT_DOUBLE_EQ(j["phases"][0]["time_us"].get<double>(), 1047.21);
  ASSERT_EQ(j["links"].size(), 2u);  // per kind: nvlink, then pcie
  EXPECT_EQ(j["links"][0]["kind"], "nvlink");
  EXPECT_EQ(j["links"][0]["links"], 2);
  EXPECT_DOUBLE_EQ(j["links"][0]["max_utilization"].get<double>(), 1.0);
  EXPECT_EQ(j["links"][1]["kind"], "pcie");
  EXPECT_DOUBLE_EQ(j["links"][1]["max_utilization"].get<double>(), 0.25);
  EXPECT_EQ(j["failures"][0], "switch-tray:0");
  EXPECT_EQ(run_result_to_json_text(sample_result()), run_result_to_json_text(sample_result()));
}

TEST(ResultsIo, NcclTestsLayout) {
  const std::string table = nccl_tests_table({sample_result()}, "float");
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  EXPECT_NE(table.find(header), std::string::npos) << table;
  const std::string cell = "   2094.4  512.67  897.17    N/A";
  const std::string row = "  1073741824     268435456     float     sum      -1" + cell + cell + "\n";
  EXPECT_NE(table.find(row), std::string::npos) << table;
  EXPECT_NE(table.find("# Avg bus bandwidth    : 897.172"), std::string::npos) << table;
  RunResult ag = sample_result();
  ag.op = "all_gather";
  ag.time_s = 12.5e-6;
  const std::string t2 = nccl_tests_table({ag}, "bfloat16");
  // all_gather: count per rank (size / 2 bytes / 8 ranks), no reduction, times under 100 us with 2 decimals.
  EXPECT_NE(t2.find("  1073741824      67108864  bfloat16    none      -1    12.50"), std::string::npos) << t2;
}

TEST(ResultsIo, CsvAndTrace) {
  const std::string csv = run_results_to_csv({sample_result()}, "float");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "system,racks,op,algo,gpus,size_B,count,type,time_us,algbw_GBps,busbw_GBps,calibration");
  EXPECT_NE(csv.find("gb200-nvl72,1,all_reduce,ring,8,1073741824,268435456,float,2094.41,512.67,897.172,none"),
            std::string::npos);
  const auto trace = nlohmann::json::parse(run_result_to_trace_json(sample_result()));
  int complete = 0, names = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++complete;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
  }
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(names, 2);  // one track per GPU and per busy link
}

TEST(ResultsIo, RoundsToSixSignificantDigits) {
  EXPECT_DOUBLE_EQ(round_to_significant(2419.69262), 2419.69);
  EXPECT_DOUBLE_EQ(round_to_significant(0.000123456789), 0.000123457);
  EXPECT_DOUBLE_EQ(round_to_significant(0.0), 0.0);
}

}  // namespace
}  // namespace racksim
