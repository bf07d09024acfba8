// all_reduce/hierarchical: NCCL's two-level all-reduce over d-GPU NVLink domains joined by NICs (seed
// course section 7): (1) reduce-scatter inside each domain, leaving position l of every domain with
// slice l (S/d) reduced over its domain; (2) all-reduce of slice l across the D domains among the GPUs
// at position l, over their own NICs (rails), so only S/d per GPU crosses the slow network; (3)
// all-gather inside each domain. Inner algorithm (request.inner_algorithm): ring, or nvls (each GPU
// sends its block to the switch, which reduces and returns slice l to position l; for the all-gather
// position l sends its slice up and the switch multicasts it), auto = nvls where the switch can. Outer
// (request.outer_algorithm): ring over the D domains, NCCL's double binary tree (nvls + tree is what
// NCCL calls NVLS-tree), or sharp: position l of every domain sends its slice through its own NIC to the
// fabric of its rail, whose InfiniBand switches add them (SHARP) and multicast the sum back (nvls + sharp
// is NCCL's NVLS across nodes over CollNet, all_reduce/nvls_collnet). Ranks must be spread evenly over the domains; position l of a domain is its
// l-th rank in request order.
// Pipelining: the buffer is cut into k blocks that flow through the three phases; every sender's tasks
// of one phase form a stream. With nvls inside, a block's outer all-reduce and all-gather overlap the
// next block's reduce-scatter (GPU -> switch and switch -> GPU are the two directions of the port), so
// the domain part costs ~S (1 + 1/d) / B instead of 2 S / B: k is the nominal fastest depth within the
// transfer budget (250 k). With ring inside the reduce-scatter and all-gather use the same ports and
// gain little from overlapping: one block unless --chunk-bytes asks (k = S / C, up to 2 M transfers).
// With k = 1 the phases run strictly one after the other, as in the course's Fig 4 model. Chunk ((b * d) + l) * m + j is piece j of slice l of block b,
// with m = D pieces per slice for an outer ring (its segments), 2 for an outer tree (one per tree).
#include "models/analytic/cost_model.hpp"
#include "models/collectives/algorithms.hpp"
#include "models/collectives/cost_patterns.hpp"
#include "models/collectives/building_blocks.hpp"

namespace racksim {

namespace {
enum StreamTag { kInnerRs = 0, kSwitchDown = 1, kOuter = 2, kOuterTree = 3, kInnerAg = 10, kAgUp = 11, kAgDown = 12 };
}

Schedule build_all_reduce_hierarchical(const CollectiveRequest& request, const TopologyGraph& graph) {
  const DomainGroups g = domain_groups(request, graph);
  const std::string inner = hierarchical_inner(request, graph);
  const std::string outer = hierarchical_outer(request);
  const DepthChoice depth = planned_depth(graph, request);
  const int d = g.per_domain, D = g.domains, blocks = depth.depth;
  const int m = D == 1 ? 1 : (outer == "ring" ? D : outer == "sharp" ? 1 : 2);
  const std::vector<int> rails = outer == "sharp" && D > 1 ? collnet_groups(request, graph, "hierarchical --outer sharp").rail
                                                           : std::vector<int>{};
  ScheduleBuilder b(request, "all_reduce/hierarchical", blocks * d * m);
  b.reserve(depth.tasks);
  const int rs_phase = b.phase("intra-reduce-scatter");
  const int outer_phase = b.phase("inter-all-reduce");
  const int ag_phase = b.phase("intra-all-gather");
  const DoubleTree tree = double_binary_tree(D);
  Streams streams;
  auto slice_first = [&](int block, int l) { return (block * d + l) * m; };

  // Per domain, the plane's scatter tasks of the latest block (the next block's all-gather waits for them).
  std::vector<std::vector<int>> scattered(g.ranks.size());

  // (1) reduce-scatter inside each domain.
  auto reduce_scatter = [&](int blk) {
    for (std::size_t k = 0; k < g.ranks.size() && d > 1; ++k) {
      const auto& group = g.ranks[k];
      if (inner == "ring") {
        std::vector<Segment> slices(d);
        for (int l = 0; l < d; ++l) slices[l] = {{slice_first(blk, l), m}};
        ring_reduce_scatter(b, group, slices, rs_phase, &streams, kInnerRs);
        continue;
      }
      const Endpoint plane = Endpoint::switch_plane(g.domain_ids[k]);
      for (int r : group)
        streams.record(kInnerRs, r, b.transfer(Endpoint::rank(r), {plane}, slice_first(blk, 0), d * m, true, rs_phase,
                                               streams.after(kInnerRs, r)));
      scattered[k].clear();
      for (int l = 0; l < d && D > 1; ++l) {  // (one domain: the all-gather multicasts straight from the plane)
        const int id = b.transfer(plane, {Endpoint::rank(group[l])}, slice_first(blk, l), m, false, rs_phase,
                                  streams.after(kSwitchDown, group[l]));
        streams.record(kSwitchDown, group[l], id);
        scattered[k].push_back(id);
      }
    }
  };
  // (2) all-reduce of slice l across domains among the GPUs at position l.
  auto across = [&](int blk) {
    for (int l = 0; l < d && D > 1; ++l) {
      std::vector<int> members;
      for (int k = 0; k < D; ++k) members.push_back(g.ranks[k][l]);
      if (outer == "ring") {
        std::vector<Segment> segments(D);
        for (int j = 0; j < D; ++j) segments[j] = {{slice_first(blk, l) + j, 1}};
        ring_reduce_scatter(b, members, segments, outer_phase, &streams, kOuter);
        ring_all_gather(b, members, segments, outer_phase, &streams, kOuter);
      } else if (outer == "sharp") {
        const int rail = rails[members[0]];
        std::vector<Endpoint> to;
        for (int r : members) {  // on one rail: collnet_groups checks it
          to.push_back(Endpoint::rank(r));
          streams.record(kOuter, r, b.transfer(Endpoint::rank(r), {Endpoint::fabric_plane(rail)}, slice_first(blk, l), 1,
                                               true, outer_phase, streams.after(kOuter, r)));
        }
        b.transfer(Endpoint::fabric_plane(rail), to, slice_first(blk, l), 1, false, outer_phase);  // no stream: collnet_direct.cpp
      } else {
        const std::array<std::vector<ChunkRange>, 2> pieces{{{{slice_first(blk, l), 1}}, {{slice_first(blk, l) + 1, 1}}}};
        tree_all_reduce(b, members, tree, pieces, outer_phase, outer_phase, streams, kOuterTree);
      }
    }
  };
  // (3) all-gather inside each domain.
  auto all_gather = [&](int blk) {
    for (std::size_t k = 0; k < g.ranks.size() && d > 1; ++k) {
      const auto& group = g.ranks[k];
      if (inner == "ring") {
        std::vector<Segment> slices(d);
        for (int l = 0; l < d; ++l) slices[l] = {{slice_first(blk, l), m}};
        ring_all_gather(b, group, slices, ag_phase, &streams, kInnerAg);
        continue;
      }
      const Endpoint plane = Endpoint::switch_plane(g.domain_ids[k]);
      for (int l = 0; l < d; ++l) {
        const int r = group[l];
        // With one domain the switch still holds the reduced slice: nothing to send up again.
        if (D > 1)
          streams.record(kAgUp, r, b.transfer(Endpoint::rank(r), {plane}, slice_first(blk, l), m, false, ag_phase,
                                              streams.after(kAgUp, r)));
        std::vector<Endpoint> others;
        for (int o : group)
          if (o != r || D == 1) others.push_back(Endpoint::rank(o));
        // The multicast waits for the plane's scatter of the next block (already issued): sharing the GPU
        // ports with it would starve that one small transfer among d-1 multicast flows and stall the
        // next block's outer phase.
        std::vector<int> after = streams.after(kAgDown, r);
        after.insert(after.end(), scattered[k].begin(), scattered[k].end());
        streams.record(kAgDown, r, b.transfer(plane, others, slice_first(blk, l), m, false, ag_phase, after));
      }
    }
  };

  if (inner == "nvls" && D > 1) {
    // Blocks overlap: the next block's reduce-scatter is issued before this block's all-gather.
    reduce_scatter(0);
    for (int blk = 0; blk < blocks; ++blk) {
      across(blk);
      if (blk + 1 < blocks) {
        reduce_scatter(blk + 1);
      } else {
        for (auto& s : scattered) s.clear();
      }
      all_gather(blk);
    }
  } else {
    for (int blk = 0; blk < blocks; ++blk) {
      reduce_scatter(blk);
      across(blk);
      all_gather(blk);
    }
  }
  b.append_note("inner " + inner + ", outer " + outer + ", " + std::to_string(D) + " domain(s) x " +
                std::to_string(d) + " GPU(s), " + std::to_string(blocks) + " block(s)");
  note_depth(b, depth);
  return b.finish();
}

// The closed-form twin of the schedule above (models/analytic/cost_model.hpp), no contention.
CostModel cost_all_reduce_hierarchical(const TopologyGraph& graph, const CollectiveRequest& request, const Calibration& calibration,
                    const FlowTerms& terms) {
  CostBuilder b(graph, request, calibration, "all_reduce/hierarchical", terms);
  hierarchical_model(b);
  return finish(b);
}

}  // namespace racksim

