#pragma once
// Reads published_measurements.json (records of public NCCL and bandwidth measurements, each with its
// `source`; a copy lives in calibrate/data/) and maps every record onto a racksim system: system id,
// racks, ranks, algorithm. A record no system can express is returned as skipped, with the reason.
#include <string>

#include <nlohmann/json.hpp>

#include "models/calibration/measurement.hpp"

namespace racksim::calibration {

// The published file shipped with the repository (calibrate/data/published_measurements.json).
std::string default_published_path();

// Strict: unknown keys, a record_type other than "collective"/"probe", or a malformed value are
// InputErrors naming the file and the JSON pointer.
MeasurementSet load_published_measurements(const std::string& path);

// Either record format, told apart by its fields: public_collectives.json's records give the GPU model and
// the interconnect as fields (`gpu_model`), published_measurements.json's the machine as text. A file given
// where the other kind is expected is read as what it is, not refused over the keys the other kind has.
MeasurementSet load_measurement_records(const std::string& path);

// Size at which a record that states only a peak bandwidth is evaluated (8 GiB: the top of the
// nccl-tests sweeps in the same file; an assumption, reported with each such record).
inline constexpr double kAssumedPeakCollectiveBytes = 8.0 * 1024 * 1024 * 1024;
// Size at which a bandwidth-only copy or memory record is evaluated (1 GiB: large enough that latency
// is < 0.1 % of the time on every link racksim models; an assumption, reported with each record).
inline constexpr double kAssumedTransferBytes = 1024.0 * 1024 * 1024;

// What a record's time and bandwidths may be (both record formats; outside them the record is skipped with the
// reason): a time in (0, kMaxRecordTime_us] (1000 s: no collective of a public benchmark takes longer; more is a
// unit slip), a bandwidth in [0, kMaxBandwidth_GBps] (nccl-tests prints 0.00 for its smallest sizes).
inline constexpr double kMaxRecordTime_us = 1e9;
bool plausible_time_us(const nlohmann::json& v);
bool plausible_GBps(const nlohmann::json& v);

}  // namespace racksim::calibration
