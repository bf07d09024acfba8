#pragma once
// Which engine requests are too large for an interactive answer, decided from the request before anything
// runs (docs/serve.md, "Limits"). The thresholds are measured wall times of this project's engine on a
// 2-core machine (docs/performance.md, issue 14's table); the wall-clock limit of every request stays the
// safety net behind them.
#include <functional>
#include <optional>
#include <string>

#include "serve/api_command.hpp"

namespace racksim::serve {

struct SystemFacts {  // from `racksim show SYSTEM --racks R --format json`
  int gpus = 0;
  int gpus_per_domain = 0;
};

struct InteractiveLimits {
  int max_engine_gpus = 1152;          // 16 NVL72 racks; 1440 GPUs hierarchical took 1.37 s, 4608 took 23 s
                                       // (since exact aggregation: 0.8 s and 5.5 s at load 6; kept)
  int max_all_to_all_gpus = 576;       // 144 GPUs took 2.3 s, 288 more than two minutes (issue 16); since
                                       // aggregation 288 take 5 s, 576 43 s (building n(n-1) routes); session
                                       // 53: 288 GPUs 0.5 s, 576 2.6 s, 1152 12 s (the routes' own costs cut)
  int max_flat_ring_domains = 2;       // a flat ring over 2 NVL72 racks took ~5 s, over 8 racks 146 s; since its
                                       // quotient (session 53) 0.15 s over 2 racks, where the rings are symmetric:
  int max_symmetric_flat_ring_domains = 16;  // whole domains in an even count: 8 racks ~1 s, 20 racks 2.3 s
  int max_odd_flat_ring_domains = 3;         // whole domains in an odd count (8 of 16 rings alike): 3 racks 2.2 s,
                                             // 7 racks 22 s
  int max_sweep_gpus = 576;            // a sweep runs the engine once per size
  int max_sweep_sizes = 40;            // 1 KiB to 16 GiB by factor 2 is 25 sizes
};

// The reason a request is refused, or nullopt to run it. `facts` looks a system up (nullopt when the
// system or racks are invalid: the command itself then reports the error, with the CLI's message).
using FactsLookup = std::function<std::optional<SystemFacts>(const std::string& system, const std::string& racks)>;
std::optional<std::string> refusal_reason(const std::string& command, const Params& params, const FactsLookup& facts,
                                          const InteractiveLimits& limits = {});

}  // namespace racksim::serve
