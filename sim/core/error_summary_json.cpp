#include "sim/core/error_summary_json.hpp"

namespace racksim {

ErrorSummary read_error_summary(JsonObjectReader& r) {
  ErrorSummary s;
  s.median_abs = r.number_in("median_abs", 0, 1e6);
  s.p90_abs = r.number_in("p90_abs", 0, 1e6);
  s.worst_abs = r.number_in("worst_abs", 0, 1e6);
  s.median_signed = r.number_in("median_signed", -1, 1e6);  // predicted / measured - 1 >= -1
  return s;
}

void write_error_summary(nlohmann::ordered_json& object, const ErrorSummary& s) {
  object["median_abs"] = s.median_abs;
  object["p90_abs"] = s.p90_abs;
  object["worst_abs"] = s.worst_abs;
  object["median_signed"] = s.median_signed;
}

}  // namespace racksim
