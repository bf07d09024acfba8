// nccl-tests output (`racksim validate|calibrate fit --nccl-tests FILE`): every run and row.
#include "fuzz_common.hpp"
#include "models/calibration/nccl_tests_output.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  for (const auto& run : racksim::calibration::parse_nccl_tests_output(text, "fuzz_all_reduce_perf.log"))
    if (run.ranks() < 0) __builtin_trap();
}
