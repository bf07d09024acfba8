// Calibration JSON (`--calibration FILE`): load, write back and reload.
#include "fuzz_common.hpp"
#include "sim/calib/calibration.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  const racksim::Calibration c = racksim::calibration_from_json_text(text, "fuzz.json");
  const std::string out = racksim::calibration_to_json_text(c);
  if (racksim::calibration_to_json_text(racksim::calibration_from_json_text(out, "again.json")) != out) __builtin_trap();
}
