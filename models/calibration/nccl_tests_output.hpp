#pragma once
// Reader for the text that NVIDIA's nccl-tests programs print (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, broadcast_perf, sendrecv_perf, and reduce/gather/scatter, which
// racksim parses but does not model). One file may hold several runs, one after another, as logs do.
//
// What is understood (real output in calibrate/nccl-tests-samples/, each with its source):
//  * the optional "# nccl-tests version 2.18.3 nccl-headers=.. nccl-library=.." and
//    "# Collective test starting: all_gather_perf" lines, and the older "===begin X test===" marker;
//  * "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...";
//  * "#  Rank  3 Group  0 Pid 123 on host device  3 [0000:0c:00] NVIDIA H100 80GB HBM3" (and the old
//    form without Group), which give the rank count, hosts and GPU names;
//  * "NCCL version 2.28.7+cuda13.0";
//  * the column header ("size count type [redop] [root] time algbw busbw #wrong|error" twice:
//    out-of-place then in-place), whose names decide how rows are read;
//  * rows, where #wrong may be a count, "N/A" or "0e+00";
//  * "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : 70.742".
// MPI launchers' "[1,0]<stdout>:" prefixes are stripped; lines that are none of the above (launcher
// warnings, prose around a pasted log) are ignored. A row that starts with a size but is cut short by a
// test failure ends the run with `failure` set. A row that cannot be read otherwise is an InputError
// naming the file and line.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/collectives/collective.hpp"

namespace racksim::calibration {

struct NcclTestsResult {
  bool present = false;      // false when the column was missing from the row
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string wrong;         // as printed: "0", "N/A", "0e+00"
};

struct NcclTestsRow {
  std::uint64_t bytes = 0;   // nccl-tests' size column (its convention per collective, see collective.hpp)
  std::uint64_t count = 0;
  std::string type, redop;   // redop "" when the table has no redop column
  std::optional<long> root;  // -1 for rootless collectives in recent versions
  NcclTestsResult out_of_place, in_place;
  int line = 0;              // 1-based line in the text
};

struct NcclTestsDevice {
  int rank = -1;
  std::string host;
  int device = -1;
  std::string bus_id;        // "0000:04:00" or "0x45"
  std::string name;          // "NVIDIA H100 80GB HBM3"
};

struct NcclTestsRun {
  std::string test;                       // "all_reduce_perf" ("_mpi" suffix dropped); "" if unnamed
  std::optional<CollectiveOp> op;         // nullopt for reduce/gather/scatter/hypercube or unnamed
  std::string tests_version;              // "2.18.3" when printed
  std::string nccl_version;               // "2.28.7+cuda13.0" or the nccl-library code "22907"
  int threads = 0, gpus_per_thread = 0;   // nThread, nGpus (0 when the header line is absent)
  std::uint64_t min_bytes = 0, max_bytes = 0;
  int warmup_iters = 0, iters = 0;
  std::vector<NcclTestsDevice> devices;   // one per rank line
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_GBps;
  std::optional<long> out_of_bounds;
  std::string failure;                    // non-empty when the run ended in a test failure
  int first_line = 0;

  // Ranks: the rank lines when present, else nThread x nGpus (single process), else 0 (unknown).
  int ranks() const;
  std::string device_name() const;        // the first rank's GPU name, "" when absent
  int hosts() const;                      // distinct host names among the rank lines
};

// Maps "all_reduce_perf", "alltoall_perf", "sendrecv_perf", ... (with or without "_mpi" or a path) to
// racksim's op; nullopt for nccl-tests programs racksim does not model.
std::optional<CollectiveOp> op_from_test_name(const std::string& test_name);

// Parses every run in `text`. `where` names the origin in errors and is used to guess the test name
// from a file name such as "all_gather_perf.log" when the text itself does not say. Throws InputError
// when no table row is found at all.
std::vector<NcclTestsRun> parse_nccl_tests_output(const std::string& text, const std::string& where);
std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path);

// Measurements from an nccl-tests log. `spec` is "FILE", "FILE=SYSTEM" or "FILE=SYSTEM/ALGORITHM":
// the system defaults to a guess from the GPU name and rank count (guess_probe_system), racks to the
// number of hosts for HGX-style systems (one node per rack) and 1 for NVL72 racks; the algorithm to
// "auto" (nccl-tests does not print NCCL_ALGO). Out-of-place times are used. Runs of programs racksim
// does not model, runs without a known rank count and failed runs are returned as skipped.
MeasurementSet nccl_tests_measurements(const std::string& spec);

}  // namespace racksim::calibration
