#include "models/calibration/measurement.hpp"

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

std::string size_band(double bytes) {
  if (bytes < 1024.0 * 1024.0) return "< 1 MiB";
  if (bytes < kLargeMessageBytes) return "1-64 MiB";
  return ">= 64 MiB";
}

}  // namespace racksim::calibration
