#pragma once
// Reads a directory written by calibrate/run_probes.sh (calibrate/data/<machine>-<date>/, record formats
// in calibrate/probes/README.md) and turns its JSON lines into measurements on a racksim system:
//  * copy_bandwidth: pinned H2D/D2H -> transfers cpu0 <-> gpu0 over the host link (copy engine);
//    D2D -> HBM traffic (read + write); pageable copies are listed as skipped (driver staging through
//    host buffers is not a route racksim models);
//  * sm_bandwidth: HBM read/write -> memory; zero-copy pinned host memory -> transfers by SM loads;
//  * p2p_bandwidth: unidirectional and bidirectional GPU-to-GPU copies -> transfers gpuS -> gpuD;
//  * nccl_sweep*.jsonl: collectives on GPUs 0..n-1 with NCCL_ALGO ring / tree / default (-> auto);
//  * gemm_bf16, device_attributes: read for the machine description only.
// Unknown record types and unknown keys are ignored, as the probes' README asks of parsers.
#include <string>

#include "models/calibration/measurement.hpp"

namespace racksim::calibration {

struct ProbeDirectoryInfo {
  std::string path;
  std::string machine;       // the directory's name ("h200-pcie-1gpu-2026-11-29")
  std::string device;        // GPU name from the headers ("NVIDIA H200")
  int device_count = 0;
  std::string nccl_version;  // from the NCCL sweep header, "" when absent
  double timer_floor_s = 0;  // the empty CUDA event pair (copy_bandwidth's "timer" record)
  std::string system;        // the racksim system the measurements were mapped onto
};

// The racksim system a probe machine is, from its GPU name and count ("NVIDIA H200", 1 -> "h200-pcie";
// 8 -> "hgx-h200"). InputError when the name is not recognised (give DIR=SYSTEM then).
std::string guess_probe_system(const std::string& device, int device_count, const std::string& where,
                               const std::string& pointer = "");

// `spec` is "DIR" or "DIR=SYSTEM". Throws InputError when DIR holds no probe JSON lines.
MeasurementSet load_probe_directory(const std::string& spec, ProbeDirectoryInfo* info = nullptr);

}  // namespace racksim::calibration
