#pragma once
// An ErrorSummary (sim/core/statistics.hpp) as the held-out error tables store it: the keys median_abs,
// p90_abs, worst_abs and median_signed of a class object. Include only from .cpp files (nlohmann/json).
#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "sim/core/statistics.hpp"

namespace racksim {

// Reads the four keys (absolute errors in [0, 1e6], the signed median in [-1, 1e6]); errors as r's.
ErrorSummary read_error_summary(JsonObjectReader& r);
// Adds the four keys to `object`, in that order.
void write_error_summary(nlohmann::ordered_json& object, const ErrorSummary& s);

}  // namespace racksim
