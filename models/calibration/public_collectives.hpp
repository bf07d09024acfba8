#pragma once
// Reads calibrate/data/public_collectives.json: public nccl-tests results collected with their addresses
// (clouds' and vendors' published runs, NVIDIA and NCCL issues and pull requests, blogs), one record per
// row the source prints, and maps each onto a racksim system and request: GPU model and interconnect to a
// system, nodes and GPUs per node to racks and ranks, the NCCL environment the source states (NCCL_ALGO,
// NCCL_PROTO, NCCL_NVLS_ENABLE, NCCL_MIN_NCHANNELS) to the request's overrides. A record racksim cannot
// express (EFA or SHARP/CollNet, GPUs it has no system for, a machine that is not what its system is) is
// returned as skipped with the reason.
#include <string>

#include "models/calibration/measurement.hpp"

namespace racksim::calibration {

std::string default_public_collectives_path();  // calibrate/data/public_collectives.json

MeasurementSet load_public_collectives(const std::string& path);

}  // namespace racksim::calibration
