// The nccl-tests parser on real pasted output (calibrate/nccl-tests-samples/, sources in its README).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "models/calibration/nccl_tests_output.hpp"
#include "sim/core/errors.hpp"

using namespace racksim;
using namespace racksim::calibration;

namespace {
std::string sample(const std::string& name) {
  return std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/nccl-tests-samples/" + name;
}
}  // namespace

TEST(NcclTestsOutput, A3MegaAllReduce16RanksOnTwoHosts) {
  const auto runs = parse_nccl_tests_file(sample("a3mega-h100-16gpu-all_reduce_perf.txt"));
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.test, "all_reduce_perf");  // from the echoed launcher command
  ASSERT_TRUE(r.op.has_value());
  EXPECT_EQ(*r.op, CollectiveOp::all_reduce);
  EXPECT_EQ(r.ranks(), 16);
  EXPECT_EQ(r.hosts(), 2);
  EXPECT_EQ(r.device_name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.devices[10].host, "ztan-mig-gq73");
  EXPECT_EQ(r.devices[10].device, 2);
  EXPECT_EQ(r.devices[10].bus_id, "0000:0b:00");
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.gpus_per_thread, 1);
  EXPECT_EQ(r.min_bytes, 8u);
  EXPECT_EQ(r.max_bytes, 8589934592u);
  EXPECT_EQ(r.warmup_iters, 5);
  EXPECT_EQ(r.iters, 20);
  ASSERT_EQ(r.rows.size(), 31u);  // 8 B .. 8 GiB in powers of two
  EXPECT_EQ(r.rows[0].bytes, 8u);
  EXPECT_EQ(r.rows[0].count, 2u);
  EXPECT_EQ(r.rows[0].type, "float");
  EXPECT_EQ(r.rows[0].redop, "sum");
  ASSERT_TRUE(r.rows[0].root.has_value());
  EXPECT_EQ(*r.rows[0].root, -1);
  EXPECT_DOUBLE_EQ(r.rows[0].out_of_place.time_us, 135.8);
  EXPECT_DOUBLE_EQ(r.rows[0].in_place.time_us, 123.5);
  const auto& last = r.rows.back();
  EXPECT_EQ(last.bytes, 8589934592u);
  EXPECT_DOUBLE_EQ(last.out_of_place.time_us, 47535);  // printed without decimals above 10 ms
  EXPECT_DOUBLE_EQ(last.out_of_place.algbw_GBps, 180.71);
  EXPECT_DOUBLE_EQ(last.out_of_place.busbw_GBps, 338.82);
  EXPECT_EQ(last.out_of_place.wrong, "0");
  EXPECT_DOUBLE_EQ(last.in_place.busbw_GBps, 337.35);
  // busbw = algbw * 2(n-1)/n for all_reduce, as nccl-tests prints both to 2 decimals: the printed
  // algbw is off by up to 0.005, times 1.875, plus 0.005 for busbw's own rounding.
  EXPECT_NEAR(last.out_of_place.algbw_GBps * busbw_factor(CollectiveOp::all_reduce, 16), last.out_of_place.busbw_GBps,
              0.005 * 1.875 + 0.005);
  ASSERT_TRUE(r.avg_busbw_GBps.has_value());
  EXPECT_DOUBLE_EQ(*r.avg_busbw_GBps, 70.742);
  ASSERT_TRUE(r.out_of_bounds.has_value());
  EXPECT_EQ(*r.out_of_bounds, 0);
  EXPECT_TRUE(r.failure.empty());
}

TEST(NcclTestsOutput, OldFormatFiveTestsWithPerTestColumns) {
  const auto runs = parse_nccl_tests_file(sample("gtx1080-2gpu-nccl2.5.7-five-tests.txt"));
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[0].test, "all_reduce_perf");
  EXPECT_EQ(runs[1].test, "all_gather_perf");
  EXPECT_EQ(runs[2].test, "broadcast_perf");
  EXPECT_EQ(runs[3].test, "reduce_perf");
  EXPECT_EQ(runs[4].test, "reduce_scatter_perf");
  EXPECT_EQ(*runs[1].op, CollectiveOp::all_gather);
  EXPECT_EQ(*runs[2].op, CollectiveOp::broadcast);
  EXPECT_EQ(*runs[3].op, CollectiveOp::reduce);
  EXPECT_EQ(*runs[4].op, CollectiveOp::reduce_scatter);
  for (const auto& r : runs) {
    EXPECT_EQ(r.rows.size(), 25u) << r.test;  // 8 B .. 128 MiB
    EXPECT_EQ(r.ranks(), 2) << r.test;        // "Rank .. Pid" lines without Group
    EXPECT_EQ(r.devices[1].bus_id, "0xc4");
    EXPECT_EQ(r.device_name(), "GeForce GTX 1080");
  }
  // all_gather has neither redop nor root; broadcast only root; reduce both.
  EXPECT_EQ(runs[1].rows[3].redop, "");
  EXPECT_FALSE(runs[1].rows[3].root.has_value());
  EXPECT_DOUBLE_EQ(runs[1].rows[3].out_of_place.time_us, 24.27);
  EXPECT_EQ(*runs[2].rows[0].root, 0);
  EXPECT_EQ(runs[2].rows[0].redop, "");
  EXPECT_EQ(runs[3].rows[9].redop, "sum");
  EXPECT_EQ(*runs[3].rows[9].root, 0);
  EXPECT_DOUBLE_EQ(runs[3].rows[9].out_of_place.time_us, 31.08);
  EXPECT_EQ(runs[0].rows[0].out_of_place.wrong, "0e+00");
  EXPECT_DOUBLE_EQ(runs[4].rows.back().in_place.time_us, 184732);
  EXPECT_DOUBLE_EQ(*runs[4].avg_busbw_GBps, 0.328477);
}

TEST(NcclTestsOutput, HeaderlessSendRecvTakesItsNameFromTheCommand) {
  const auto runs = parse_nccl_tests_file(sample("a100-8gpu-sendrecv_perf.txt"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "sendrecv_perf");
  EXPECT_EQ(*runs[0].op, CollectiveOp::send_recv);
  EXPECT_EQ(runs[0].ranks(), 0);  // no Rank lines, no nThread line: unknown
  ASSERT_EQ(runs[0].rows.size(), 4u);
  EXPECT_EQ(runs[0].rows[3].bytes, 1073741824u);
  EXPECT_DOUBLE_EQ(runs[0].rows[3].out_of_place.busbw_GBps, 195.10);
  EXPECT_EQ(runs[0].rows[3].in_place.wrong, "N/A");
}

TEST(NcclTestsOutput, FailedRunIsReportedNotParsedAsNumbers) {
  const auto runs = parse_nccl_tests_file(sample("h800-16gpu-alltoall_perf-failure.txt"));
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.test, "alltoall_perf");
  EXPECT_EQ(*r.op, CollectiveOp::all_to_all);
  EXPECT_EQ(r.tests_version, "2.17.6");
  EXPECT_EQ(r.nccl_version, "2.28.7+cuda13.0");  // the "NCCL version" line wins over nccl-library=22807
  EXPECT_EQ(r.ranks(), 16);
  EXPECT_EQ(r.hosts(), 2);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_NE(r.failure.find("illegal memory access"), std::string::npos);
  EXPECT_NE(r.failure.find("line 27"), std::string::npos);
}

TEST(NcclTestsOutput, MpiPrefixesAndLauncherNoiseAreIgnored) {
  const std::string text =
      "[1,0]<stdout>:# nccl-tests version 2.18.0 nccl-headers=22907 nccl-library=22907\n"
      "[1,0]<stdout>:# Collective test starting: all_gather_perf_mpi\n"
      "[1,0]<stdout>:#  Rank  0 Group  0 Pid 1 on lab device  0 [0000:02:00] NVIDIA GeForce RTX 5090\n"
      "[1,0]<stdout>:#  Rank  1 Group  0 Pid 2 on lab device  0 [0000:02:00] NVIDIA GeForce RTX 5090\n"
      "[1,0]<stderr>:Authorization required, but no authorization protocol specified\n"
      "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "[1,0]<stdout>:     1048576        131072     float    none      -1  2191.72    0.48    0.24       0  2194.02    0.48    0.24       0\n";
  const auto runs = parse_nccl_tests_output(text, "mpi.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "all_gather_perf");
  EXPECT_EQ(runs[0].nccl_version, "22907");
  EXPECT_EQ(runs[0].ranks(), 2);
  ASSERT_EQ(runs[0].rows.size(), 1u);
  EXPECT_EQ(runs[0].rows[0].redop, "none");
  EXPECT_DOUBLE_EQ(runs[0].rows[0].out_of_place.time_us, 2191.72);
}

TEST(NcclTestsOutput, MalformedRowNamesFileAndLine) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    12.x    0.08    0.15      0    11.0    0.09    0.16      0\n";
  try {
    parse_nccl_tests_output(text, "bad.log");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "bad.log");
    EXPECT_EQ(e.json_path(), "line 2");
  }
  EXPECT_THROW(parse_nccl_tests_output("no table here\n", "empty.log"), InputError);
}

TEST(NcclTestsOutput, MeasurementsFromALogGuessTheSystemAndRacks) {
  const MeasurementSet m = nccl_tests_measurements(sample("a3mega-h100-16gpu-all_reduce_perf.txt"));
  ASSERT_EQ(m.measurements.size(), 31u);
  const auto& last = m.measurements.back();
  EXPECT_EQ(last.system, "hgx-h100");  // "H100" in the GPU name
  EXPECT_EQ(last.racks, 2);            // 16 ranks on 8-GPU nodes
  EXPECT_EQ(last.gpus.size(), 16u);
  EXPECT_EQ(last.algorithm, "auto");   // nccl-tests does not print NCCL_ALGO
  EXPECT_DOUBLE_EQ(last.time_s, 47535e-6);
  EXPECT_DOUBLE_EQ(last.bytes, 8589934592.0);
  // Explicit system and algorithm; unknown rank count and failures are skipped with a reason.
  const MeasurementSet e = nccl_tests_measurements(sample("a3mega-h100-16gpu-all_reduce_perf.txt") + "=hgx-h100/ring");
  EXPECT_EQ(e.measurements.front().algorithm, "ring");
  const MeasurementSet s = nccl_tests_measurements(sample("a100-8gpu-sendrecv_perf.txt"));
  EXPECT_TRUE(s.measurements.empty());
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].reason.find("number of ranks is unknown"), std::string::npos);
  const MeasurementSet f = nccl_tests_measurements(sample("h800-16gpu-alltoall_perf-failure.txt"));
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_NE(f.skipped[0].reason.find("failed"), std::string::npos);
}

// Issue 16: logs that crashed the parser (a 50 000-character line overflowed std::regex's stack; stoi on
// out-of-range numbers escaped as std::out_of_range, "internal error" exit 3) or asked for absurd sizes.
namespace {
const char* kHeader =
    "# nThread 1 nGpus 2 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#  Rank  0 Group  0 Pid 1 on host device  0 [0000:01:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid 1 on host device  1 [0000:02:00] NVIDIA H100 80GB HBM3\n";
const char* kRow = "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n";

std::string nccl_tests_error_of(const std::string& text) {
  try {
    parse_nccl_tests_output(text, "x_perf.log");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(NcclTestsOutput, FiftyThousandCharacterLinesParse) {
  const std::string long_line(50000, 'x');
  const auto runs = parse_nccl_tests_output(std::string(kHeader) + long_line + "\n" + "# " + long_line + "\n" +
                                                "[1,0]<stdout>:" + long_line + "\n" + kRow,
                                            "all_reduce_perf.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].rows.size(), 1u);
  EXPECT_EQ(runs[0].ranks(), 2);
  EXPECT_EQ(runs[0].test, "all_reduce_perf");  // from the file name
  // A 50 000-character value in a row is an InputError, echoed short.
  const std::string e = nccl_tests_error_of(std::string(kHeader) + "8 2 float sum -1 " + std::string(50000, '1') + "x 0 0 0 1 0 0 0\n");
  EXPECT_NE(e.find("line 4"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 1000u);
}

TEST(NcclTestsOutput, OutOfRangeNumbersAreInputErrors) {
  EXPECT_NE(nccl_tests_error_of("# nThread 1 nGpus 99999999999999999999 minBytes 8 maxBytes 64\n" + std::string(kRow)).find("nGpus"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of("# nThread 1 nGpus 100000 minBytes 8 maxBytes 64\n" + std::string(kRow)).find("[0, 4096]"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of("# nThread 1 nGpus 2 minBytes 8 maxBytes 99999999999999999999999\n" + std::string(kRow)).find("maxBytes"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of(std::string(kHeader) + "#  Rank 99999999999 Group 0 Pid 1 on h device 0 [x] GPU\n" + kRow).find("Rank"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of(std::string(kHeader) + "99999999999999999999999 2 float sum -1 1 1 1 0 1 1 1 0\n").find("size (bytes)"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of(std::string(kHeader) + "8 99999999999999999999999 float sum -1 1 1 1 0 1 1 1 0\n").find("count"),
            std::string::npos);
  EXPECT_NE(nccl_tests_error_of(std::string(kHeader) + "8 2 float sum 1e300 1 1 1 0 1 1 1 0\n").find("root"), std::string::npos);
  EXPECT_NE(nccl_tests_error_of(std::string(kHeader) + "# Out of bounds values : 99999999999999999999999 OK\n" + kRow).find("out of bounds"),
            std::string::npos);
}

// Found by fuzz_nccl_tests: a line of only \v or \f survived trim() (which strips " \t\r\n") but split
// into no tokens, and tokens[0] read past an empty vector.
TEST(NcclTestsOutput, ALineOfOnlyVerticalWhitespaceIsSkipped) {
  const auto runs = parse_nccl_tests_output(std::string(kHeader) + "\v\f\v\n" + kRow, "all_reduce_perf.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].rows.size(), 1u);
}

// Found by fuzz_nccl_tests: a column header whose names run to thousands of characters was echoed whole
// in the "allowed" part of the message about a short row, past the one-line message bound.
TEST(NcclTestsOutput, AHugeColumnHeaderIsEchoedShortened) {
  const std::string header = "#  size count " + std::string(20000, 'x') + " time algbw busbw #wrong time algbw busbw #wrong\n";
  const std::string message = nccl_tests_error_of(std::string(kHeader) + header + "8 2 1 2\n");
  EXPECT_NE(message.find("a row with"), std::string::npos) << message;
  EXPECT_LE(message.size(), kMaxMessageBytes);
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(NcclTestsOutput, LineShapesTheRegexesAccepted) {
  const std::string text = std::string("# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22907\n") +
                           "=== begin all_gather_perf test ===\n" + kHeader +
                           "#  Rank  2 Pid 7 on other device  0 [0x45] GeForce GTX 1080\n"  // old form, no Group
                           "NCCL version 2.28.7+cuda13.0\n" + kRow + "# Out of bounds values : 3 OK\n" +
                           "# Avg bus bandwidth    : 70.742 \n";
  const auto runs = parse_nccl_tests_output(text, "log");
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.test, "all_gather_perf");
  EXPECT_EQ(r.tests_version, "2.17.1");
  EXPECT_EQ(r.nccl_version, "2.28.7+cuda13.0");  // the NCCL line overrides nccl-library=
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.gpus_per_thread, 2);
  EXPECT_EQ(r.max_bytes, 64u);
  EXPECT_EQ(r.warmup_iters, 5);
  EXPECT_EQ(r.iters, 20);
  ASSERT_EQ(r.devices.size(), 3u);
  EXPECT_EQ(r.devices[2].host, "other");
  EXPECT_EQ(r.devices[2].bus_id, "0x45");
  EXPECT_EQ(r.devices[2].name, "GeForce GTX 1080");
  EXPECT_EQ(*r.out_of_bounds, 3);
  EXPECT_DOUBLE_EQ(*r.avg_busbw_GBps, 70.742);
  // Echoed launcher commands name the test; a word merely ending in _perf does not.
  EXPECT_EQ(parse_nccl_tests_output("$ mpirun -np 8 ./build/alltoall_perf_mpi -b 8 -e 1G\n" + std::string(kRow), "log")[0].test,
            "alltoall_perf");
  EXPECT_EQ(parse_nccl_tests_output("see sendrecv_perf.c\n" + std::string(kRow), "log")[0].test, "");
}

TEST(NcclTestsOutput, AHeaderAskingForMoreRanksThanTheSystemHasIsRefused) {
  const std::string path = ::testing::TempDir() + "/huge_all_reduce_perf.txt";
  {
    std::ofstream out(path);
    out << "# Collective test starting: all_reduce_perf\n# nThread 25 nGpus 4000 minBytes 8 maxBytes 64\n" << kRow;
  }
  auto refusal = [&](const std::string& system) {
    try {
      nccl_tests_measurements(path + "=" + system);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no InputError)");
  };
  const std::string hgx = refusal("hgx-h100");
  EXPECT_NE(hgx.find("100000 ranks = 12500 racks of hgx-h100"), std::string::npos) << hgx;
  // The bound is in ranks: 576 eight-GPU nodes, the 4 608 ranks of 64 NVL72 racks.
  EXPECT_NE(hgx.find("at most 4608 ranks (576 racks"), std::string::npos) << hgx;
  // A system without a physical max_racks (issue 14): the log is still refused, by what validation prices.
  const std::string nvl = refusal("gb200-nvl72");
  EXPECT_NE(nvl.find("100000 ranks = 1389 racks of gb200-nvl72"), std::string::npos) << nvl;
  EXPECT_NE(nvl.find("at most 4608 ranks (64 racks"), std::string::npos) << nvl;
}
