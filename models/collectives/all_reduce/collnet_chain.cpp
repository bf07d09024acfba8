// all_reduce/collnet_chain: NCCL's CollNetChain (src/device/all_reduce.h, runCollNetChain). Inside each node
// the GPUs form a chain (the tree graph's intra-node chain, connect.cc) whose top is the channel's head:
// partial sums flow up the chain, the head sends the node's sum through its NIC to the fabric, whose
// switches add the nodes' sums (InfiniBand SHARP), the total comes back to every node's head and flows down
// the chain. Each channel has its own head and NIC, so the channels together use every NIC. Every GPU sends
// each of its channels' data twice over NVLink (up and down), as in a tree's chain: NVLink-bound where
// NVLink is not much faster than the node's NICs together (HGX H100: 450 GB/s per GPU against 8 x 50 GB/s).
// NCCL runs it only with NCCL_COLLNET_ENABLE=1 (tuning.cc:502-507); its latency is 2 (ppn - 1) intraLat +
// interLat (:422-423), one hop per chain link each way plus the network's.
// racksim: channel l's chain starts at rank l of each node (its head, whose NIC rail is the channel's fabric
// plane) and runs l, l+1, ..., l-1 in request order; channel l carries 1/d of the buffer, cut into k pieces
// that pipeline (chunk b * d + l is channel l's piece b). Each (channel, sender, direction) is a stream.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/cost_patterns.hpp"

namespace racksim {

namespace {
// Stream tags, per channel l: kPerChannel * l + one of these.
enum StreamTag { kChainUp = 0, kNetUp = 1, kChainDown = 2, kPerChannel = 3 };

// Channel l's chain in a node: position j is rank group[(l + j) % d]; position 0 is the head.
int chain_rank(const std::vector<int>& group, int l, int j) { return group[(l + j) % group.size()]; }
}  // namespace

Schedule build_all_reduce_collnet_chain(const CollectiveRequest& request, const TopologyGraph& graph) {
  const CollnetGroups c = collnet_groups(request, graph, "collnet_chain");
  const DomainGroups& g = c.groups;
  const DepthChoice depth = planned_depth(graph, request);
  const int d = g.per_domain, D = g.domains, pieces = depth.depth;
  ScheduleBuilder b(request, "all_reduce/collnet_chain", pieces * d);
  b.reserve(depth.tasks);
  const int chain_up = b.phase("chain-reduce"), up = b.phase("network-reduce"), down = b.phase("network-multicast"),
            chain_down = b.phase("chain-broadcast");
  Streams streams;
  for (int piece = 0; piece < pieces; ++piece)
    for (int l = 0; l < d; ++l) {
      const int chunk = piece * d + l;
      const int tag = kPerChannel * l;
      for (const auto& group : g.ranks)
        for (int j = d - 1; j >= 1; --j) {
          const int from = chain_rank(group, l, j);
          streams.record(tag + kChainUp, from,
                         b.transfer(Endpoint::rank(from), {Endpoint::rank(chain_rank(group, l, j - 1))}, chunk, 1, true,
                                    chain_up, streams.after(tag + kChainUp, from)));
        }
      const int rail = c.rail[g.ranks[0][l]];
      std::vector<Endpoint> heads;
      for (const auto& group : g.ranks) {  // on one rail: collnet_groups checks it
        heads.push_back(Endpoint::rank(group[l]));
        streams.record(tag + kNetUp, group[l],
                       b.transfer(Endpoint::rank(group[l]), {Endpoint::fabric_plane(rail)}, chunk, 1, true, up,
                                  streams.after(tag + kNetUp, group[l])));
      }
      // No stream: the fabric reduces piece b+1 while it multicasts piece b (collnet_direct.cpp).
      b.transfer(Endpoint::fabric_plane(rail), heads, chunk, 1, false, down);
      for (const auto& group : g.ranks)
        for (int j = 0; j + 1 < d; ++j) {
          const int from = chain_rank(group, l, j);
          streams.record(tag + kChainDown, from,
                         b.transfer(Endpoint::rank(from), {Endpoint::rank(chain_rank(group, l, j + 1))}, chunk, 1, false,
                                    chain_down, streams.after(tag + kChainDown, from)));
        }
    }
  b.append_note(std::to_string(D) + " node(s), " + std::to_string(d) + " chain(s) of " + std::to_string(d) + " GPU(s), " +
                std::to_string(pieces) + " piece(s) each; SHARP reduces in the fabric of each head's NIC rail");
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention: one stage per
// chain level up and down, the network round trip between them, and every chain link at once as the steady
// state that bounds the pipeline's cycle.
CostModel cost_all_reduce_collnet_chain(const TopologyGraph& graph, const CollectiveRequest& request,
                                        const Calibration& calibration, const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/collnet_chain", terms);
  const CollnetGroups c = collnet_groups(request, graph, "collnet_chain");
  const DomainGroups& g = c.groups;
  const int d = g.per_domain, D = g.domains;
  const double share = static_cast<double>(request.bytes) / d;
  b.m.transfer_budget = kHierarchicalTransferBudget;
  b.m.unit_bytes = static_cast<double>(request.bytes);  // a piece of every channel together, as NCCL's loop
  std::vector<const FlowCoster::Path*> all;
  auto level = [&](int j, bool towards_head) {
    std::vector<const FlowCoster::Path*> flows;
    for (int l = 0; l < d; ++l)
      for (const auto& group : g.ranks) {
        const int a = b.v(chain_rank(group, l, j)), h = b.v(chain_rank(group, l, towards_head ? j - 1 : j + 1));
        flows.push_back(&b.fc.gpu_to_gpu(a, h));
      }
    all.insert(all.end(), flows.begin(), flows.end());
    b.add(towards_head ? "chain-reduce" : "chain-broadcast", flows, share);
  };
  for (int j = d - 1; j >= 1; --j) level(j, true);
  fabric_round_trip(b, c, share, "network-reduce", "network-multicast");
  for (int j = 0; j + 1 < d; ++j) level(j, false);
  if (!all.empty()) b.m.steady.push_back({"steady", b.fc.stage(all), share, 1});
  b.m.tasks_per_item = 2L * D * d * (d - 1) + static_cast<long>(D) * d + d;
  b.m.transfers_per_item = 2L * D * d * d;
  b.m.detail = std::to_string(D) + " nodes, " + std::to_string(d) + " chains";
  return finish(b);
}

}  // namespace racksim
