// Model preset JSON (`racksim plan --model FILE`): load, write back and reload.
#include "fuzz_common.hpp"
#include "models/workload/model_spec.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  const racksim::ModelSpec m = racksim::model_from_json_text(text, "fuzz.json");
  const std::string out = racksim::model_to_json_text(m);
  if (racksim::model_to_json_text(racksim::model_from_json_text(out, "again.json")) != out) __builtin_trap();
}
