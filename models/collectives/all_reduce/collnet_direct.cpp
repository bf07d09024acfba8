// all_reduce/collnet_direct: NCCL's CollNetDirect (src/device/all_reduce.h, runCollNetDirect; CollNet = the
// network reduces, here InfiniBand SHARP through the nccl-rdma-sharp plugin). Inside each node every GPU is
// the head of 1/ppn of the buffer: every GPU sends each head its share directly over NVSwitch, the head
// reduces the node's contributions, sends the node's sum through its own NIC to the fabric, whose switches
// add the nodes' sums (SHARP) and return the total to every node's head of that share, which sends it to
// the other GPUs of its node. A node's NICs each carry S/ppn up and S/ppn down: the network part costs
// S/(ppn x B_nic) each way however many nodes there are (a ring across nodes moves 2S(n-1)/n per NIC).
// NCCL runs it only with NCCL_COLLNET_ENABLE=1 and NVSwitch inside the node (tuning.cc:502-509); its
// model halves the bandwidth when GPUs outnumber NICs and takes 0.85 on Hopper and later (:344-348), and
// its latency is 2 (intraLat + 0.4 us per local rank) + interLat (:418-421).
// racksim: rank l of each NVLink domain is head l (every rank has its own NIC, collnet_groups); its fabric
// plane is its NIC's rail (Endpoint::fabric_plane: GPU -> NIC -> leaf -> spine, sim/platform). The buffer
// is cut into k blocks that pipeline through the four phases; chunk b * d + l is head l's share of block b.
// Each (sender, head) pair is a stream, so a GPU sends to all heads at once as NCCL's Direct does.
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/cost_patterns.hpp"

namespace racksim {

namespace {
// Stream tags: scatter to head l is kScatter + l; the others are one stream per sender.
enum StreamTag { kUp = 0, kBroadcast = 2, kScatter = 16 };
}  // namespace

Schedule build_all_reduce_collnet_direct(const CollectiveRequest& request, const TopologyGraph& graph) {
  const CollnetGroups c = collnet_groups(request, graph, "collnet_direct");
  const DomainGroups& g = c.groups;
  const DepthChoice depth = planned_depth(graph, request);
  const int d = g.per_domain, D = g.domains, blocks = depth.depth;
  ScheduleBuilder b(request, "all_reduce/collnet_direct", blocks * d);
  b.reserve(depth.tasks);
  const int scatter = b.phase("scatter-reduce"), up = b.phase("network-reduce"), down = b.phase("network-multicast"),
            bcast = b.phase("broadcast");
  Streams streams;
  for (int blk = 0; blk < blocks; ++blk) {
    // (1) every GPU sends head l its share l, the head reduces.
    for (const auto& group : g.ranks)
      for (int p = 0; p < d; ++p)
        for (int s = 1; s < d; ++s) {  // staggered, so that every head hears from one GPU per step
          const int l = (p + s) % d;
          streams.record(kScatter + l, group[p],
                         b.transfer(Endpoint::rank(group[p]), {Endpoint::rank(group[l])}, blk * d + l, 1, true, scatter,
                                    streams.after(kScatter + l, group[p])));
        }
    // (2) each head sends its node's sum to its rail's fabric, which adds the nodes' sums.
    for (const auto& group : g.ranks)
      for (int l = 0; l < d; ++l)
        streams.record(kUp, group[l],
                       b.transfer(Endpoint::rank(group[l]), {Endpoint::fabric_plane(c.rail[group[l]])}, blk * d + l, 1,
                                  true, up, streams.after(kUp, group[l])));
    // (3) the fabric multicasts the total to head l of every node (the heads of share l share its rail:
    // collnet_groups checks it).
    for (int l = 0; l < d; ++l) {
      std::vector<Endpoint> heads;
      for (const auto& group : g.ranks) heads.push_back(Endpoint::rank(group[l]));
      const int rail = c.rail[g.ranks[0][l]];
      // No stream: the fabric reduces block b+1 while it multicasts block b (SHARP aggregates and returns at
      // line rate), as NVLS's plane does (all_reduce/nvls.cpp).
      b.transfer(Endpoint::fabric_plane(rail), heads, blk * d + l, 1, false, down);
    }
    // (4) head l sends the total to the other GPUs of its node.
    for (const auto& group : g.ranks)
      for (int l = 0; l < d && d > 1; ++l) {
        std::vector<Endpoint> others;
        for (int o = 1; o < d; ++o) others.push_back(Endpoint::rank(group[(l + o) % d]));
        streams.record(kBroadcast, group[l],
                       b.transfer(Endpoint::rank(group[l]), others, blk * d + l, 1, false, bcast,
                                  streams.after(kBroadcast, group[l])));
      }
  }
  b.append_note(std::to_string(D) + " node(s) x " + std::to_string(d) + " head(s), " + std::to_string(blocks) +
                " block(s); SHARP reduces in the fabric of each head's NIC rail");
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_reduce_collnet_direct(const TopologyGraph& graph, const CollectiveRequest& request,
                                         const Calibration& calibration, const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/collnet_direct", terms);
  const CollnetGroups c = collnet_groups(request, graph, "collnet_direct");
  const DomainGroups& g = c.groups;
  const int d = g.per_domain, D = g.domains;
  const double share = static_cast<double>(request.bytes) / d;
  std::vector<const FlowCoster::Path*> scatter, bcast;
  for (const auto& group : g.ranks)
    for (int l = 0; l < d; ++l) {
      for (int o = 1; o < d; ++o) {
        scatter.push_back(&b.fc.gpu_to_gpu(b.v(group[(l + o) % d]), b.v(group[l])));
        bcast.push_back(&b.fc.gpu_to_gpu(b.v(group[l]), b.v(group[(l + o) % d])));
      }
    }
  b.m.transfer_budget = kHierarchicalTransferBudget;
  b.m.unit_bytes = static_cast<double>(request.bytes);
  const int scatter_stage = static_cast<int>(b.m.stages.size());
  b.add("scatter-reduce", scatter, share);
  fabric_round_trip(b, c, share, "network-reduce", "network-multicast");
  b.add("broadcast", bcast, share);
  if (d > 1) b.m.shared = {{scatter_stage, static_cast<int>(b.m.stages.size()) - 1}};  // the same NVLink ports
  b.m.tasks_per_item = static_cast<long>(D) * d * (d + 1) + d;
  b.m.transfers_per_item = 2L * D * d * d;
  b.m.detail = std::to_string(D) + " nodes x " + std::to_string(d) + " heads";
  return finish(b);
}

}  // namespace racksim
