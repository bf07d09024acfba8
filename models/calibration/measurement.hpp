#pragma once
// One measured number racksim can predict, in one shape whatever it came from (a published record, a
// probe JSON line, an nccl-tests row): what ran where, how many bytes, how long it took. The fitter
// learns calibration parameters from these; `racksim validate` predicts each and reports the error.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/collectives/collective.hpp"

namespace racksim::calibration {

enum class MeasurementKind {
  collective,  // an NCCL collective on `gpus` of `system`
  transfer,    // one copy from `src` to `dst` (copy engine or SM loads), over the route between them
  memory,      // a GPU streaming its own HBM (`memory_op`: traffic counted as the source counts it)
};
const char* to_string(MeasurementKind kind);

struct Measurement {
  std::string id;           // unique and stable: "published#17", "<probe dir>/copy_bandwidth.jsonl:23", "<file>:41"
  std::string series;       // the sweep the point belongs to (plots, held-out splits, per-sweep summaries)
  MeasurementKind kind = MeasurementKind::collective;
  std::string system;       // racksim system id (topologies/<id>.json)
  int racks = 1;
  // NVLink partitions as `--partitions` takes them; empty: the system as shipped. "18x1" on an NVL72 is
  // NCCL_MNNVL_ENABLE=0: every compute tray its own NVLink domain, the trays joined by their NICs.
  std::string partitions;
  bool placement_known = true;  // false: the source leaves the ranks' nodes or NICs open (validation only)
  // The source names InfiniBand or RoCE but not the NICs' count or speed: predicted with the system's own
  // NICs, and fitted only where the model time is mostly latency, which the NICs do not change.
  bool nics_assumed = false;
  // Non-empty: the source's network is one racksim does not model, and the system's NICs stand in for it at
  // the same bandwidth per node (AWS EFA; record_systems.hpp); validation only, never fitted.
  std::string network_stand_in;
  // The record's scale-out NIC bandwidth per direction where it is not the system's (GB/s; 0: the system's),
  // as `--nic-GBps` sets it: a stand-in network's per-GPU share (GCP A3 Mega's 200 Gb/s data NICs).
  double nic_GBps = 0;
  // Non-empty: the record shows an effect the model does not represent (named, with its source); predicted
  // and reported, never fitted, so that it cannot bend a coefficient that holds elsewhere.
  std::string unmodelled_effect;
  std::string measured_on;  // the source's own words for the machine

  // collective
  CollectiveOp op = CollectiveOp::all_reduce;
  std::string algorithm;    // racksim algorithm name ("ring", "nvls", "tree", "auto")
  std::string protocol = "auto";  // NCCL_PROTO as the source ran it ("LL128"), else auto
  int channels = 0;         // NCCL_MIN/MAX_NCHANNELS as the source ran it, else 0
  bool nvls_enabled = true; // false: NCCL_NVLS_ENABLE=0
  bool collnet_enabled = false; // true: NCCL_COLLNET_ENABLE=1 with the SHARP plugin
  int ib_qps_per_connection = 0; // NCCL_IB_QPS_PER_CONNECTION as the source ran it, else 0 (NCCL's one)
  std::vector<int> gpus;    // global GPU indices of the ranks

  // transfer: graph vertex names or aliases ("cpu0", "gpu1"); engine "copy" or "sm"
  std::string src, dst, engine;
  // memory: "read", "write", "copy", "triad", ... (what the source measured)
  std::string memory_op;

  double bytes = 0;          // nccl-tests size for collectives; bytes moved for transfers; traffic for memory
  bool bytes_assumed = false;  // the source gives a bandwidth without a size: `bytes` is racksim's stand-in
  double time_s = 0;         // measured time (derived as bytes / bandwidth when only a bandwidth was given)
  double reported_GBps = 0;  // the bandwidth the source printed: busbw for collectives, GB/s otherwise
  bool time_derived = false; // time_s came from reported_GBps (not printed by the source)
  double timer_floor_s = 0;  // measurement overhead inside time_s (probes: an empty CUDA event pair)
  // nccl-tests times every size twice in one run, out of place (time_s) and in place: the in-place time
  // where the source printed it, else 0. Not predicted (racksim prices the out-of-place run); it says how far
  // one run's own two timings of the same collective are apart (collective_fit.hpp, MeasurementSpread).
  double in_place_time_s = 0;

  std::string source;        // where the number is published or which file holds it
  std::string confidence;    // "high" | "medium" | "low" (published records), "measured" (probe files)
  std::string nccl_version;
  std::string note;
};

// A record that no racksim system can express, with the reason.
struct SkippedRecord {
  std::string id;
  std::string what;    // short description of the record
  std::string reason;
};

struct MeasurementSet {
  std::vector<Measurement> measurements;
  std::vector<SkippedRecord> skipped;
  void append(MeasurementSet other);
};

// A record's "inplace" value ({"time_us": ..., "algbw_GBps": ..., "busbw_GBps": ...} as nccl-tests prints its
// in-place columns): its time in seconds when it is a positive number, else 0 (absent, null or no time).
double in_place_time_s(const nlohmann::json& inplace);

// Size bands used in summaries: "< 1 MiB", "1-64 MiB", ">= 64 MiB" (the validation bounds split at 64 MiB).
std::string size_band(double bytes);
inline constexpr double kLargeMessageBytes = 64.0 * 1024 * 1024;

}  // namespace racksim::calibration
