#pragma once
// The builders of every algorithm, one per file in models/collectives/<op>/<algorithm>.cpp; registry.cpp
// lists them. Each throws InputError when it cannot run on the request and topology. The request has
// been validated (validate_request) before any of them is called.
#include <optional>

#include "models/collectives/schedule.hpp"

namespace racksim {

class TopologyGraph;
struct Calibration;
struct CostModel;
struct FlowTerms;

Schedule build_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph);
std::optional<Schedule> quotient_all_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_tree(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_nvls_tree(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_collnet_direct(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_collnet_chain(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_nvls_collnet(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_reduce_hierarchical(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph);
std::optional<Schedule> quotient_all_gather_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_gather_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph);
std::optional<Schedule> quotient_reduce_scatter_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_reduce_scatter_nvls(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_all_to_all_direct(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_broadcast_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_reduce_ring(const CollectiveRequest& request, const TopologyGraph& graph);
Schedule build_send_recv_ring(const CollectiveRequest& request, const TopologyGraph& graph);

// Their closed-form cost models (models/analytic/cost_model.hpp), in the same files.
CostModel cost_all_reduce_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_reduce_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_reduce_tree(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_reduce_nvls_tree(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_reduce_collnet_direct(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                                         const FlowTerms& terms);
CostModel cost_all_reduce_collnet_chain(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                                        const FlowTerms& terms);
CostModel cost_all_reduce_nvls_collnet(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                                       const FlowTerms& terms);
CostModel cost_all_reduce_hierarchical(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_gather_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_gather_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_reduce_scatter_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_reduce_scatter_nvls(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_all_to_all_direct(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_broadcast_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);
CostModel cost_reduce_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                           const FlowTerms& terms);
CostModel cost_send_recv_ring(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms);

}  // namespace racksim
