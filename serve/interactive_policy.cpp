#include "serve/interactive_policy.hpp"

#include <charconv>
#include <cstdint>

#include "models/collectives/sweep_sizes.hpp"
#include "sim/core/units.hpp"

namespace racksim::serve {

namespace {

std::optional<std::string> param(const Params& params, const std::string& key) {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return std::nullopt;
}

std::optional<long> as_int(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  long v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

// The sweep's size count as `racksim sweep` would make it; nullopt when the sizes are invalid (the command
// reports that itself).
std::optional<std::size_t> sweep_size_count(const Params& params) {
  try {
    const std::uint64_t lo = units::parse_bytes(param(params, "min-bytes").value_or("8"), "--min-bytes");
    const std::uint64_t hi = units::parse_bytes(param(params, "max-bytes").value_or("16G"), "--max-bytes");
    const double f = std::stod(param(params, "step-factor").value_or("2"));
    return racksim::sweep_sizes(lo, hi, f).size();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> refusal_reason(const std::string& command, const Params& params, const FactsLookup& facts,
                                          const InteractiveLimits& limits) {
  if (command != "collective" && command != "sweep") return std::nullopt;  // the engine runs only there
  const auto gpus = as_int(param(params, "gpus"));
  const auto system = param(params, "system");
  if (!gpus || !system || *gpus < 1) return std::nullopt;
  const std::string n = std::to_string(*gpus);
  const std::string alternative = " Ask fewer GPUs, a hierarchical algorithm, or the course's model (fig4).";
  if (*gpus > limits.max_engine_gpus)
    return "the engine on " + n + " GPUs is not interactive (4608 GPUs take ~5 s and 370 MB); the server runs it "
           "up to " + std::to_string(limits.max_engine_gpus) + " GPUs." + alternative;
  if (param(params, "op").value_or("") == "all_to_all" && *gpus > limits.max_all_to_all_gpus)
    return "an all_to_all on " + n + " GPUs sends " + std::to_string(*gpus * (*gpus - 1)) + " flows at once: the engine "
           "builds each (576 GPUs: ~3 s, 1152: ~12 s); the server runs it up to " + std::to_string(limits.max_all_to_all_gpus) + " GPUs.";
  if (param(params, "algo").value_or("auto") == "ring") {
    const auto f = facts(*system, param(params, "racks").value_or(""));
    const int domains = f && f->gpus_per_domain > 0 ? static_cast<int>((*gpus + f->gpus_per_domain - 1) / f->gpus_per_domain) : 1;
    // Whole domains: NCCL's rail rings are symmetric (ring onto ring; with an even count domains turned by two) and
    // the engine simulates one position per orbit (models/collectives/building_blocks.hpp); otherwise every transfer.
    const bool whole = f && f->gpus_per_domain > 0 && *gpus % f->gpus_per_domain == 0;
    const int symmetric_limit = domains % 2 == 0 ? limits.max_symmetric_flat_ring_domains : limits.max_odd_flat_ring_domains;
    if (domains > limits.max_flat_ring_domains && (!whole || domains > symmetric_limit))
      return "a flat ring over " + n + " GPUs crosses " + std::to_string(domains) + " NVLink domains of " +
             std::to_string(f->gpus_per_domain) + " GPUs: the engine needs tens of seconds or minutes for it unless "
             "whole domains come in an even count (8 domains ~1 s); the server runs flat rings over up to " +
             std::to_string(limits.max_flat_ring_domains) + " domains, or whole domains up to " +
             std::to_string(limits.max_symmetric_flat_ring_domains) + " in an even count and " +
             std::to_string(limits.max_odd_flat_ring_domains) + " in an odd one. --algo hierarchical runs it as NCCL does "
             "across domains." + alternative;
  }
  if (command == "sweep") {
    if (*gpus > limits.max_sweep_gpus)
      return "a sweep runs the engine once per size: on " + n + " GPUs that is not interactive; the server sweeps up to " +
             std::to_string(limits.max_sweep_gpus) + " GPUs (use collective for single sizes)." + alternative;
    const auto sizes = sweep_size_count(params);
    if (sizes && *sizes > static_cast<std::size_t>(limits.max_sweep_sizes))
      return "a sweep of " + std::to_string(*sizes) + " sizes is not interactive; the server sweeps up to " +
             std::to_string(limits.max_sweep_sizes) + " sizes (raise --step-factor or narrow the range).";
  }
  return std::nullopt;
}

}  // namespace racksim::serve
