#pragma once
// Exact binary encoding of RunResults, for the pipe between the engine process and its caller (doubles
// travel as their 8 bytes, so the caller sees bit-identical numbers).
#include <string>
#include <vector>

#include "sim/results/run_result.hpp"

namespace racksim {

std::string encode_run_results(const std::vector<RunResult>& results);
// SimulationError when the bytes are not a complete encoding.
std::vector<RunResult> decode_run_results(const std::string& bytes);

}  // namespace racksim
