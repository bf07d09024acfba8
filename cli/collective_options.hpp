#pragma once
// Options shared by `racksim collective` and `racksim sweep` (their names are a contract other tools
// rely on), and the steps that turn them into a graph, calibration, failures and a request.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "models/collectives/collective.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/failure_scenario.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::cli {

struct CollectiveOptions {
  std::string system, op, bytes, algo = "auto", chunk_bytes;
  // Given or not: each applies to one algorithm (--inner/--outer: hierarchical) or to some ops (--root), and
  // one given where it does not apply is refused rather than ignored (setup_collective).
  std::optional<std::string> inner, outer;
  std::optional<int> root;
  std::string calibration = "default", format, trace, dtype = "float";
  std::optional<int> racks;
  std::optional<double> nic_GBps;  // --nic-GBps: every scale-out NIC of the system at this speed
  std::string protocol = "auto", nvls = "on", collnet = "off", nccl_version = "2.28";
  int gpus = 0, channels = 0, ib_qps = 0;
  std::vector<std::string> fail;
  std::string partitions, partition_mode = "full-bandwidth";
  std::string aggregation = "auto";  // collective only: the engine's exact aggregation (sim/engine/aggregation.hpp)
  std::string model = "auto";        // auto (the engine, else the closed form), engine or analytic (add_model_option)
};

// Adds --system --racks --op --gpus [--bytes] --algo --inner --outer --fail --partitions --partition-mode
// --chunk-bytes --calibration --dtype --root --nic-GBps. --bytes only when `with_bytes` (the sweep has
// --min-bytes/--max-bytes instead).
void add_collective_options(CLI::App& cmd, CollectiveOptions& o, bool with_bytes);

struct CollectiveSetup {
  std::unique_ptr<TopologyGraph> graph;
  Calibration calibration;
  FailureScenario failures;
  CollectiveRequest request;  // bytes left 0 when the options have none
};

// Loads the system, calibration and failures and builds the request. InputError naming the option.
CollectiveSetup setup_collective(const CollectiveOptions& o, const GlobalOptions& global);

// Adds --model (auto, engine, analytic) to a command: auto runs the engine and answers an EngineLimitError with the
// closed form (analytic_run_result, sim/engine/simulation.hpp), engine keeps the refusal, analytic never runs it.
void add_model_option(CLI::App& cmd, std::string& model);
// The options the closed form cannot honour (--fail, and those listed in `engine_options` that were given):
// with --model analytic they are refused naming them; with auto they keep the engine's refusal.
bool engine_only(const CLI::App& cmd, const CollectiveOptions& o, const std::vector<std::string>& engine_options);

// Parses a byte count for `option` and checks it is in [1 B, 1 TiB].
std::uint64_t parse_size_option(const std::string& text, const std::string& option);

}  // namespace racksim::cli
