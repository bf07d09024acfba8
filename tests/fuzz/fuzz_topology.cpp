// Topology JSON (topologies/*.json, `--system FILE`): load, build the graph, write back and reload.
#include "fuzz_common.hpp"
#include "sim/topo/topology_graph.hpp"
#include "sim/topo/topology_spec.hpp"

void racksim::fuzz::one_input(const std::string& text) {
  const racksim::TopologySpec spec = racksim::topology_from_json_text(text, "fuzz.json");
  const racksim::TopologyGraph graph(spec, spec.rack.default_racks);
  const racksim::TopologySpec again = racksim::topology_from_json_text(racksim::topology_to_json_text(spec), "again.json");
  if (racksim::topology_to_json_text(again) != racksim::topology_to_json_text(spec)) __builtin_trap();
}
