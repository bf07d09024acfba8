// Schedule JSON (`racksim schedule check|run FILE`): load, check symbolically, write back and reload.
#include "fuzz_common.hpp"
#include "models/collectives/schedule_check.hpp"
#include "models/collectives/schedule_io.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  const racksim::Schedule s = racksim::schedule_from_json_text(text, "fuzz.json");
  (void)racksim::check_schedule_counted(s);
  const std::string out = racksim::schedule_to_json_text(s);
  if (racksim::schedule_to_json_text(racksim::schedule_from_json_text(out, "again.json")) != out) __builtin_trap();
}
