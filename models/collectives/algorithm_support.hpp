#pragma once
// What several algorithms (and the analytic model, which must plan exactly as they build) share: the
// task budgets, request checks, the NVLS applicability check, the grouping of ranks by NVLink domain
// for hierarchical collectives, and NCCL's double binary tree.
#include <array>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"

namespace racksim {

class TopologyGraph;

// Budgets, in transfers (one per task and destination: what the engine simulates; a multicast to n-1
// GPUs counts n-1). Default pipelining never makes more than kDefaultTransferBudget of them (single-level
// algorithms) or kHierarchicalTransferBudget (hierarchical), unless the unpipelined schedule alone has
// more. The figures aim at one 72-GPU collective in ~20 ms and a 576-GPU hierarchical one in ~1 s in
// the engine (~590 k comms/s with few flows in flight, far fewer with thousands: TOOLCHAIN.md).
inline constexpr long kDefaultTransferBudget = 20000;
inline constexpr long kHierarchicalTransferBudget = 250000;
// Broadcast and reduce chains across nodes (one per NIC rail, each through every rank): a chain fills in n-1
// hops, so its depth decides its time. Two GB200 racks, 16 chains of 144 ranks, 1 GiB (NCCL moves 512 KiB
// chunks: 128 per chain): 20 000 transfers gave depth 8 and 70 GB/s of bus bandwidth; 50 000 depth 21, 148 GB/s,
// 1.6 s of engine; 100 000 depth 43, 222 GB/s, 5.3 s; 250 000 depth 109, 261 GB/s, 14.5 s (session 21, this VM).
inline constexpr long kChainTransferBudget = 100000;
// Limits on one schedule, checked before it is built (build_schedule; docs/errors.md):
// * memory: every schedule's estimate (schedule_bytes, beside the graph's estimate_graph) against the
//   memory budget (sim/core/memory_budget.hpp: 8 GiB or less; issue 14). Peak memory per task and per
//   transfer (schedule, compiled run, engine process; caller and engine summed) measured on hierarchical
//   all-reduces (ring and tree outer, 32-256 racks) less the graph and the process start-up: ~310 B per
//   task and ~360 B per transfer, rounded up (docs/performance.md).
// * kMaxTransfers: a fixed cap that single-level rings and all_to_all keep, and that the analytic model
//   lowers a --chunk-bytes to (its note; results must not depend on the machine's memory).
// The engine's time budget (transfers x transfers in flight) is checked on what it simulates, after exact
// aggregation of symmetric copies: kMaxEngineWork in sim/engine/aggregation.hpp.
inline constexpr long kMaxTransfers = 2000000;
inline constexpr double kScheduleBytesPerTask = 400;
inline constexpr double kScheduleBytesPerTransfer = 380;
inline double schedule_bytes(double tasks, double transfers) {
  return tasks * kScheduleBytesPerTask + transfers * kScheduleBytesPerTransfer;
}

// Checks everything about a request that does not depend on the algorithm: ranks (>= 1, send_recv >= 2,
// distinct, < graph.gpu_count()), bytes in [1, 1 TiB], chunk_bytes <= 1 TiB, root, dtype and the
// hierarchical inner/outer names. InputError naming the option otherwise.
void validate_request(const CollectiveRequest& request, const TopologyGraph& graph);

// Graph vertex of rank r's GPU.
int rank_vertex(const CollectiveRequest& request, const TopologyGraph& graph, int rank);

// NVLS: the NVLink domain every rank is in. InputError (--algo) when the system's switches cannot reduce
// and multicast (nvlink_domain.multicast_reduction false, or no NVLink switch at all) or when the ranks
// span several NVLink domains.
int nvls_domain(const CollectiveRequest& request, const TopologyGraph& graph);
bool system_has_nvls(const TopologyGraph& graph);

// Hierarchical collectives: ranks grouped by NVLink domain (in order of first appearance), position l of
// a group being its l-th rank in request order. InputError when a GPU is in no NVLink domain or the
// domains hold different numbers of ranks.
struct DomainGroups {
  int domains = 0;                       // D
  int per_domain = 0;                    // d
  std::vector<int> domain_ids;           // graph NVLink domain of group k
  std::vector<std::vector<int>> ranks;   // [k][l] -> rank
};
DomainGroups domain_groups(const CollectiveRequest& request, const TopologyGraph& graph);
// CollNet (IB SHARP, models/collectives/all_reduce/collnet_*.cpp): the domain groups, and the NIC rail of
// each rank's own NIC (its fabric plane: sim/platform), the same for position l of every domain. InputError
// (--algo, --gpus) naming what is missing: an InfiniBand scale-out fabric, a NIC for every rank, at least
// two NVLink domains (the network reduces across nodes; NCCL's CollNet needs nNodes > 1), ranks placed
// alike in every domain.
struct CollnetGroups {
  DomainGroups groups;
  std::vector<int> rail;  // per rank
};
CollnetGroups collnet_groups(const CollectiveRequest& request, const TopologyGraph& graph, const std::string& algorithm);

// The request as racksim's hierarchical all-reduce with these inner and outer algorithms: what NCCL's
// NVLS-tree (nvls, tree) and NVLS over CollNet (nvls, sharp) run on.
CollectiveRequest as_hierarchical(const CollectiveRequest& request, const std::string& inner, const std::string& outer);

// "ring" or "nvls" for request.inner_algorithm ("auto": nvls when the switches can reduce), "ring" or
// "tree" for the outer one. InputError for nvls on a system without it.
std::string hierarchical_inner(const CollectiveRequest& request, const TopologyGraph& graph);
std::string hierarchical_outer(const CollectiveRequest& request);

// NCCL's double binary tree over n members (src/graph/trees.cc): tree 0 is the binary tree rooted at 0
// in which a member's parent is found by bit manipulation; tree 1 is its mirror (n even) or the same
// tree shifted by one (n odd), so that most members are a leaf in one tree and inner in the other.
struct DoubleTree {
  int n = 0;
  std::array<std::vector<int>, 2> parent;                 // -1 at the root
  std::array<std::vector<std::vector<int>>, 2> children;  // in increasing member order
  std::array<std::vector<int>, 2> depth;                  // root 0
  std::array<std::vector<int>, 2> order;                  // members by increasing depth (ties: index)
  int height = 0;                                         // max depth over both trees
};
int btree_parent(int n, int member);
DoubleTree double_binary_tree(int n);
// NCCL's tree over the ranks (src/graph/connect.cc:50-62, trees.cc): inside each node (NVLink domain,
// or tray without NVLink) a chain in rank order whose first rank is the node's head; the heads form the
// double binary tree of trees.cc across nodes. `nodes`: the ranks of each node (request rank indices);
// members of the result are rank indices 0..n-1.
DoubleTree nccl_tree(const std::vector<std::vector<int>>& nodes, int n);
// The ranks of a request grouped into NCCL's nodes, in order of first appearance.
std::vector<std::vector<int>> nccl_nodes(const CollectiveRequest& request, const TopologyGraph& graph);
// How many NIC rails NCCL's ring and tree channels spread over across nodes: min(NCCL's ring graph
// channels, NICs per node, GPUs per node) (models/nccl; a tree has the ring's channel count, init.cc:1026);
// rail j is the node's GPU at index j * local / rails. 1 inside one node.
int nccl_rails(const CollectiveRequest& request, const TopologyGraph& graph);
// One NCCL tree per rail (nccl_tree with each node's chain starting at the rail's GPU): tree j's
// inter-node edges leave through rail j's NIC. One tree inside one node.
std::vector<DoubleTree> nccl_trees(const CollectiveRequest& request, const TopologyGraph& graph);

// Number of pipeline pieces when a stream of `unit_bytes` is cut into chunks of `chunk_bytes`
// (at least 1, at most unit_bytes so that no piece is empty unless the unit is).
long pieces_for_chunk(double unit_bytes, std::uint64_t chunk_bytes);

}  // namespace racksim
