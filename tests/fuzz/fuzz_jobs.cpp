// Job-mix JSON (`racksim jobs FILE`, scenarios/*.json): load, then place the jobs on the system when it
// is a shipped one at 1-2 racks (a path in the input is not followed: /dev/zero is not a topology).
#include <algorithm>

#include "fuzz_common.hpp"
#include "models/jobs/job_mix.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  const racksim::JobMix mix = racksim::job_mix_from_json_text(text, "fuzz.json");
  const auto ids = racksim::SystemCatalog::shipped().ids();
  if (std::find(ids.begin(), ids.end(), mix.system) == ids.end()) return;
  const racksim::TopologySpec spec = racksim::SystemCatalog::shipped().load(mix.system);
  const int racks = mix.racks.value_or(spec.rack.default_racks);
  if (racks > 2) return;
  racksim::TopologyGraph graph(spec, racks);
  if (!mix.partitions.empty()) graph.apply_partitions(racksim::parse_partitions(mix.partitions, graph));
  (void)racksim::resolve_jobs(mix, graph);
}
