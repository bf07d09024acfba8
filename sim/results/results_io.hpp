#pragma once
// Writers for RunResults: the CLI's JSON contract, a human table, nccl-tests' perf table (so a sweep
// diffs against a real all_reduce_perf run), CSV, and a Chrome/Perfetto trace. Numbers in JSON and CSV
// are rounded to 6 significant digits so that output is stable and readable; the same inputs give
// byte-identical text.
#include <string>
#include <vector>

#include "sim/results/run_result.hpp"

namespace racksim {

// Per link kind: how many links carried data, their bytes, and the highest utilisation seen.
struct LinkKindSummary {
  std::string kind;
  int links = 0;
  double bytes = 0;
  double max_utilization = 0;
};
// In the order nvlink, c2c, pcie, cpu-cpu, nic, ib (kinds that carried nothing are left out).
std::vector<LinkKindSummary> summarize_links(const RunResult& result);

// {"system","racks","op","algo","algo_note","gpus","bytes","chunk_bytes","time_us","algbw_GBps",
//  "busbw_GBps","phases":[{"name","time_us"}],"links":[{"kind","links","bytes","max_utilization"}],
//  "calibration","failures"} with a trailing newline.
std::string run_result_to_json_text(const RunResult& result);
// A JSON array of the objects above.
std::string run_results_to_json_text(const std::vector<RunResult>& results);
// What `racksim collective --format table` prints.
std::string run_result_to_table(const RunResult& result);
// The "heldout_error" value of the JSON above ("null" when there is none), for writers of other results.
std::string heldout_error_to_json_text(const std::optional<HeldoutError>& heldout);

// nccl-tests' layout (size, count, type, redop, root, then time/algbw/busbw/#wrong out-of-place and
// in-place; the simulation has one time, printed in both places, except on one rank, where NCCL launches
// nothing in place (0 us, bandwidths N/A); no data check: #wrong is N/A).
// `dtype`: the element type printed and used for the count column.
std::string nccl_tests_table(const std::vector<RunResult>& rows, const std::string& dtype);
std::string run_results_to_csv(const std::vector<RunResult>& rows, const std::string& dtype);

// Chrome trace JSON ("traceEvents"): one track per GPU (and switch plane) with its tasks, one track per
// busy link with its busy intervals. Needs a result run with RunOptions::record_trace.
std::string run_result_to_trace_json(const RunResult& result);

// Rounds to `digits` significant digits (0, inf and nan unchanged).
double round_to_significant(double value, int digits = 6);

}  // namespace racksim
