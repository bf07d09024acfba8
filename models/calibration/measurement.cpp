#include "models/calibration/measurement.hpp"

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"

namespace racksim::calibration {

const char* to_string(MeasurementKind kind) {
  switch (kind) {
    case MeasurementKind::collective: return "collective";
    case MeasurementKind::transfer: return "transfer";
    case MeasurementKind::memory: return "memory";
  }
  return "?";
}

void MeasurementSet::append(MeasurementSet other) {
  for (auto& m : other.measurements) measurements.push_back(std::move(m));
  for (auto& s : other.skipped) skipped.push_back(std::move(s));
}

double in_place_time_s(const nlohmann::json& inplace) {
  if (!inplace.is_object()) return 0;
  const auto it = inplace.find("time_us");
  if (it == inplace.end() || !it->is_number() || !(it->get<double>() > 0)) return 0;
  return units::us_to_s(it->get<double>());
}

std::string size_band(double bytes) {
  if (bytes < 1024.0 * 1024.0) return "< 1 MiB";
  if (bytes < kLargeMessageBytes) return "1-64 MiB";
  return ">= 64 MiB";
}

}  // namespace racksim::calibration
