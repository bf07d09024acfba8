#pragma once
// Pieces several algorithms are made of: ring reduce-scatter and all-gather over a group of ranks, and
// NCCL's double-binary-tree all-reduce, emitted into a ScheduleBuilder on any chunk layout. The flat
// algorithms use them on all ranks; hierarchical uses them inside each NVLink domain and across domains.
#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/collectives/algorithm_support.hpp"
#include "models/collectives/schedule_builder.hpp"

namespace racksim {

struct DepthChoice;  // models/analytic/cost_model.hpp
class TopologyGraph;
}

namespace racksim {

struct ChunkRange {
  int first = 0;
  int count = 1;
};
// One segment of a ring: its pieces, each moved by its own task (sub-chunks of a pipelined segment, or
// one range for a whole slice).
using Segment = std::vector<ChunkRange>;

// n segments of p single-chunk pieces each, interleaved: segment i = chunks {j * n + i : j < p}
// (chunk_layout.hpp: piece j of owner i).
std::vector<Segment> interleaved_segments(int n, int p);

// Send streams: a task appended to stream (tag, src) depends on the stream's previous task, so pieces
// leave a sender one after another (pipelining) instead of all at once. Tag values are the caller's.
class Streams {
 public:
  // The last task recorded for (tag, key), -1 for none.
  int last(int tag, int key) const {
    const auto it = last_.find({tag, key});
    return it == last_.end() ? -1 : it->second;
  }
  // The same as a dependency list: empty, or that one task.
  std::vector<int> after(int tag, int key) const {
    const int task = last(tag, key);
    return task < 0 ? std::vector<int>{} : std::vector<int>{task};
  }
  void record(int tag, int key, int task) { last_[{tag, key}] = task; }

 private:
  std::map<std::pair<int, int>, int> last_;
};

// NCCL's rings across NVLink domains (nodes), one per NIC its ring channels leave a node through
// (src/graph/search.cc: each ring channel enters and leaves a node on one NIC; connect.cc joins the nodes'
// rings): ring j visits the nodes in request order, starting inside each node at the GPU on rail r_j and
// running forward in even nodes and backward in odd ones, so that it leaves node k and enters node k+1 on
// the same rail (rail-aligned). Each ring carries 1 / rings of the data; together they use every NIC the
// rings use in each direction. Inside one node all channels are alike: one ring in request order.
// Rings: min(NCCL's ring channels, NICs per node, GPUs per node) (models/nccl).
std::vector<std::vector<int>> nccl_ring_orders(const CollectiveRequest& request, const TopologyGraph& graph);
// The symmetry of those rings (issue 14's exact aggregation, built instead of found): the permutations of ranks
// that take ring 0 onto some ring j read from the start of some node m and take every ring onto a ring (turned),
// kept when they are distinct and closed under composition (a group) and more than one. On GB200 racks (16 rings,
// ring j from rail floor(4.5 j), forward in even racks and backward in odd ones) with an even rack count that is
// 16 x racks / 2 permutations: ring 0 goes onto ring 2i from an even rack (racks rotated by an even count, GPUs
// turned by 9 i) and onto ring 2i + 1 from an odd one; with an odd count the 8 turns by 9 i alone, which take the
// even rings onto each other and the odd ones onto each other. Inside one node (one ring in request order) the
// candidates start from each rank instead: the ring's n turns (72 on one GB200 rack, period one rank). Each orbit of
// rings is listed by its lowest ring,
// with its period: the least turn of it the group keeps (one orbit of tasks holds that ring's positions i,
// i + period, ...). The topology's share of the symmetry (routes, links) is checked where the schedule is compiled
// (sim/engine/symmetric_run.hpp).
struct RingSymmetry {
  std::vector<std::vector<int>> rank_maps;                 // [0]: the identity
  std::vector<std::vector<std::pair<int, int>>> image;     // [element][ring]: onto that ring, turned by that much
  std::vector<int> listed_rings;                           // the lowest ring of each orbit of rings, ascending
  std::vector<int> periods;                                // per listed ring
};
std::optional<RingSymmetry> rail_ring_symmetry(const CollectiveRequest& request, const TopologyGraph& graph,
                                               const std::vector<std::vector<int>>& orders);
// The rings' schedule as its own quotient under rail_ring_symmetry, or nothing where they have none: each listed
// ring's reduce-scatter and / or all-gather (ring_reduce_scatter, ring_all_gather, one stream per ring and rank) at
// positions [0, period) only, each task's deps naming the listed task of its dependency's orbit (position mod
// period), each task's orbit-mean bytes (ScheduleSymmetry::mean_bytes), with the full schedule's depth, chunks and
// notes. `owned_by_rank` as ring_segments.
std::optional<Schedule> ring_quotient_schedule(const CollectiveRequest& request, const TopologyGraph& graph,
                                               const std::string& algorithm, bool owned_by_rank, bool reduce_scatter,
                                               bool all_gather);
// Rings of n ranks whose schedule has `transfers` transfers: over kMaxTransfers the engine will not run them, an
// EngineLimitError (valid input the closed form prices: --model auto answers with it, saying why; a flat
// ring through 8 GB200 racks at 1 GiB is 10.6 M).
void check_ring_transfers(int n, int rings, long transfers);
// The note of a schedule of `rings` such rings ("16 rings, one per NIC rail").
void note_rings(ScheduleBuilder& b, int rings);
// The builder's pipeline depth: its note, and where it was lowered below NCCL's chunks the two counts
// (Schedule::pipeline_pieces, nccl_chunks).
void note_depth(ScheduleBuilder& b, const DepthChoice& depth);
// NCCL's broadcast and reduce chains: its ring channels cut open at the root (enqueue.cc runs Broadcast and
// Reduce on the ring graph, tuning.cc:273), so across nodes one chain per NIC rail as nccl_ring_orders, each
// starting at request.root and carrying 1 / chains of the buffer. Inside one node: one chain in request order
// from the root.
std::vector<std::vector<int>> nccl_chain_orders(const CollectiveRequest& request, const TopologyGraph& graph);
// The chains' transfers, k pieces each (chunk j * k + c is piece c of chain j): from the root down each chain
// (broadcast), or `towards_root` from the rank after the root round to the root, each hop adding (reduce). A
// rank forwards piece c once it has it and has forwarded piece c-1 (one stream per chain and rank).
void chain_transfers(ScheduleBuilder& b, const std::vector<std::vector<int>>& chains, int k, int phase, bool towards_root);
// Ring `ring`'s segments, p pieces each, for `rings` rings over n ranks (chunks = rings * p * n): position
// i gets the pieces {(ring * p + t) * n + key : t < p}, key = i, or the rank order[i] when the op's chunk c
// belongs to rank c % n (all_gather, reduce_scatter: chunk_layout.hpp).
std::vector<Segment> ring_segments(const std::vector<int>& order, int p, int ring, bool owned_by_rank);

// Ring reduce-scatter over `members` (ranks in ring order, g of them): in step s = 0..g-2 member i sends
// segment (i - s - 1) mod g to member i+1, which reduces it. Segment i ends at member i, reduced over
// the group. With `streams`, each member's sends form one stream (tag `stream_tag`): NCCL's connection to
// its ring successor, which carries a channel's steps in order (its FIFO of NCCL_STEPS slots), so a step's
// send waits for the previous one. NCCL's rings pass them: without that order a member that has the data of
// several steps sends them all at once, and a ring whose NIC hop is slower than its NVLink hops bunches
// its steps at that hop and starves it (2 GB200 racks, 144 ranks: 20 % slower than the steps' sum).
void ring_reduce_scatter(ScheduleBuilder& b, const std::vector<int>& members, const std::vector<Segment>& segments,
                         int phase, Streams* streams = nullptr, int stream_tag = 0);
// Ring all-gather: member i starts with segment i; in step s member i sends segment (i - s) mod g to
// member i+1, which stores it. Every member ends with every segment.
void ring_all_gather(ScheduleBuilder& b, const std::vector<int>& members, const std::vector<Segment>& segments,
                     int phase, Streams* streams = nullptr, int stream_tag = 0);

// Double-binary-tree all-reduce over `members`: tree t carries pieces[t] in order; for each piece the
// members reduce it towards the root (children before parents), then the root's result is broadcast
// back down. Each (member, tree, direction, peer) is a stream, so pieces pipeline through the tree.
// stream_tag and stream_tag + 1..3 are used.
void tree_all_reduce(ScheduleBuilder& b, const std::vector<int>& members, const DoubleTree& tree,
                     const std::array<std::vector<ChunkRange>, 2>& pieces, int up_phase, int down_phase,
                     Streams& streams, int stream_tag);

}  // namespace racksim
