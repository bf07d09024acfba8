#pragma once
// What a racksim.System holds: the spec and its graph (the graph keeps its own copy of the spec).
#include <memory>
#include <optional>
#include <string>

#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::bindings {

struct SystemHandle {
  TopologySpec spec;
  std::shared_ptr<TopologyGraph> graph;

  // A spec (from a file, or a dict through topology_from_json_text) for `racks` racks (its default if none).
  static std::shared_ptr<SystemHandle> from_spec(TopologySpec spec, std::optional<int> racks) {
    auto h = std::make_shared<SystemHandle>();
    h->spec = std::move(spec);
    h->graph = std::make_shared<TopologyGraph>(h->spec, racks ? *racks : h->spec.rack.default_racks);
    return h;
  }
  // A shipped id or a topology JSON path.
  static std::shared_ptr<SystemHandle> load(const std::string& system, std::optional<int> racks) {
    return from_spec(SystemCatalog::shipped().load(system), racks);
  }
};

}  // namespace racksim::bindings
