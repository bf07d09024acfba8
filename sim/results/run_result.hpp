#pragma once
// The outcome of one simulated collective: times, nccl-tests bandwidths, per-phase and per-link detail,
// and an echo of everything that produced it. JSON / table / trace writers live in results_io.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/calib/heldout_errors.hpp"

namespace racksim {

struct PhaseTime {
  std::string name;
  double time_s = 0;   // from the phase's first task start to its last task end
};

struct LinkUsage {
  std::string name;           // graph edge name, or "<gpu>.nvlink-port"
  std::string kind;           // nvlink, c2c, pcie, cpu-cpu, nic, ib
  double bytes = 0;           // bytes carried, both directions
  double busy_s = 0;          // time with at least one flow
  double max_utilization = 0; // peak share of capacity used, in [0, 1]
};

struct TraceEvent {            // one task on one track, for the Chrome/Perfetto trace
  std::string track;           // "gpu3", "link r0.t0.nic0-port", "switch d0"
  std::string name;            // "phase: task id"
  double start_s = 0, end_s = 0;
};

struct EngineRun {            // how the discrete-event engine ran it (empty mode: not the engine)
  std::string mode;            // "aggregated" (each class of symmetric copies once), "full", or "analytic" (not
                               // run: the closed form's estimate, `racksim collective --model`; note says why)
  int tasks = 0;               // tasks of the schedule(s)
  int simulated_tasks = 0;     // tasks the engine simulated
  std::string note;            // why the full run was taken
};

struct RunResult {
  std::string system;
  int racks = 1;
  std::string rack_unit = "rack";  // what one of `racks` is called: the topology's rack.unit ("node" on HGX);
                                   // tables only, JSON keeps "racks"
  std::string op, algorithm;   // algorithm: what ran ("nvls"); auto's pick is reported here
  std::string algorithm_note;  // why auto picked it, inner/outer choices
  std::string protocol;        // NCCL protocol the run used: LL, LL128, Simple
  int channels = 0;            // NCCL channels (CTAs) the run used
  std::vector<std::string> warnings;  // parameters borrowed from another architecture, assumptions
  int gpus = 0;
  std::uint64_t bytes = 0;
  std::uint64_t chunk_bytes = 0;
  double time_s = 0;
  double algbw_Bps = 0, busbw_Bps = 0;
  std::vector<PhaseTime> phases;
  std::vector<LinkUsage> links;       // per link kind summary comes from these
  std::vector<TraceEvent> trace;      // filled only when a trace is requested
  std::string calibration;            // name of the calibration used
  std::vector<std::string> failures;  // the failure items, as given
  // The model's error on collectives like this one on systems it was not fitted to (leave one system out),
  // when priced with the shipped calibration on a healthy system; nullopt otherwise.
  std::optional<HeldoutError> heldout_error;
  EngineRun engine;
};

}  // namespace racksim
