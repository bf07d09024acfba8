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

  static std::shared_ptr<SystemHandle> load(const std::string& system, std::optional<int> racks) {
    auto h = std::make_shared<SystemHandle>();
    h->spec = SystemCatalog::shipped().load(system);
    h->graph = std::make_shared<TopologyGraph>(h->spec, racks ? *racks : h->spec.rack.default_racks);
    return h;
  }
};

}  // namespace racksim::bindings
