#pragma once
// The builders of every algorithm, one per file in models/collectives/<op>/<algorithm>.cpp; registry.cpp
// lists them. Each throws InputError when it cannot run on the request and topology. The request has
// been validated (validate_request) before any of them is called.
#include "models/collectives/schedule.hpp"

namespace racksim {

class TopologyGraph;

Schedule build_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_tree(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_hierarchical(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_gather_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_reduce_scatter_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_to_all_direct(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_broadcast_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_send_recv_ring(const CollectiveRequest& request, const TopologyGraph& graph);

}  // namespace racksim
