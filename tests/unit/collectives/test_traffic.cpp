// Bytes each rank sends and receives, against the closed forms of the seed course (section 7) and
// nccl-tests' definitions; task counts against the budgets the engine's speed needs.
#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

using test::make_request;

Schedule build(CollectiveOp op, const std::string& algo, const TopologyGraph& g, std::vector<int> gpus,
               std::uint64_t bytes) {
  return build_schedule(make_request(op, algo, std::move(gpus), bytes), g);
}

// Ring all-reduce: every rank sends and receives 2(n-1)/n * S.
TEST(Traffic, RingAllReduceMovesTwoNMinusOneOverNTimesS) {
  const auto g = test::shipped("gb200-nvl72");
  for (int n : {2, 8, 72}) {
    const std::uint64_t S = 72ULL * 1024 * 1024;  // divisible by 2, 8 and 72
    const auto t = schedule_traffic(build(CollectiveOp::all_reduce, "ring", g, test::first_gpus(n), S));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(t.sent[r], 2 * (n - 1) * (S / n)) << "n=" << n << " rank " << r;
      EXPECT_EQ(t.received[r], 2 * (n - 1) * (S / n));
    }
    EXPECT_EQ(t.switch_received, 0u);
  }
}

// NVLS: each GPU sends S to the switch and receives S back; the switch takes n*S and multicasts n*S.
TEST(Traffic, NvlsAllReduceSendsSUpAndReceivesSDown) {
  const auto g = test::shipped("gb200-nvl72");
  for (int n : {8, 72}) {
    const std::uint64_t S = 1000003;
    const auto t = schedule_traffic(build(CollectiveOp::all_reduce, "nvls", g, test::first_gpus(n), S));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(t.sent[r], S);
      EXPECT_EQ(t.received[r], S);
    }
    EXPECT_EQ(t.switch_received, n * S);
    EXPECT_EQ(t.switch_sent, n * S);
  }
}

// CollNet: the network carries S/d up and S/d down per GPU (the node's sum of each share, once per node),
// however many nodes; NVLink carries 2 (d-1)/d S each way per GPU (Direct: scatter to the heads and the
// heads' broadcast; Chain: a channel's share up and down its chain, except at the chain's ends).
TEST(Traffic, CollnetSendsEachShareThroughTheNetworkOnce) {
  const int nodes = 4, d = 8, n = nodes * d;
  const auto g = test::shipped("hgx-b200", nodes);
  const std::uint64_t S = 8ULL * 1024 * 1024;  // divisible by d
  for (const char* algo : {"collnet_direct", "collnet_chain"}) {
    const auto t = schedule_traffic(build(CollectiveOp::all_reduce, algo, g, test::first_gpus(n), S));
    EXPECT_EQ(t.fabric_received, n * (S / d)) << algo;
    EXPECT_EQ(t.fabric_sent, n * (S / d)) << algo;  // multicast: counted once per receiving head
    EXPECT_EQ(t.switch_received, 0u) << algo;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(t.sent[r], 2 * (d - 1) * (S / d) + S / d) << algo << " rank " << r;  // + its share to the fabric
      EXPECT_EQ(t.received[r], 2 * (d - 1) * (S / d) + S / d) << algo << " rank " << r;
    }
  }
}

// CollNet needs several nodes (the network reduces across them) and the same ranks in each; each refused
// with the reason.
TEST(Traffic, CollnetIsRefusedWhereTheNetworkCannotReduce) {
  auto refused = [](const TopologyGraph& g, std::vector<int> gpus, const std::string& needle) {
    try {
      build(CollectiveOp::all_reduce, "collnet_direct", g, std::move(gpus), 1 << 20);
      ADD_FAILURE() << "accepted, expected: " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(test::shipped("hgx-b200", 1), test::first_gpus(8), "CollNet reduces across nodes");
  refused(test::shipped("hgx-b200", 2), {0, 1, 2, 8}, "unevenly");
}

TEST(Traffic, AllGatherReduceScatterAllToAllMoveNMinusOneOverN) {
  const auto g = test::shipped("gb200-nvl72");
  const int n = 8;
  const std::uint64_t S = 8 * 4096;
  const auto ag = schedule_traffic(build(CollectiveOp::all_gather, "ring", g, test::first_gpus(n), S));
  const auto rs = schedule_traffic(build(CollectiveOp::reduce_scatter, "ring", g, test::first_gpus(n), S));
  const auto a2a = schedule_traffic(build(CollectiveOp::all_to_all, "direct", g, test::first_gpus(n), S));
  const auto ag_nvls = schedule_traffic(build(CollectiveOp::all_gather, "nvls", g, test::first_gpus(n), S));
  const auto rs_nvls = schedule_traffic(build(CollectiveOp::reduce_scatter, "nvls", g, test::first_gpus(n), S));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ag.sent[r], (n - 1) * S / n);
    EXPECT_EQ(ag.received[r], (n - 1) * S / n);
    EXPECT_EQ(rs.sent[r], (n - 1) * S / n);
    EXPECT_EQ(a2a.sent[r], (n - 1) * S / n);
    EXPECT_EQ(a2a.received[r], (n - 1) * S / n);
    EXPECT_EQ(ag_nvls.sent[r], S / n);            // its own piece, once
    EXPECT_EQ(ag_nvls.received[r], (n - 1) * S / n);
    EXPECT_EQ(rs_nvls.sent[r], S);                // its whole input to the switch
    EXPECT_EQ(rs_nvls.received[r], S / n);        // only its reduced share
  }
}

TEST(Traffic, BroadcastChainAndSendRecv) {
  const auto g = test::shipped("gb200-nvl72");
  const int n = 8;
  const std::uint64_t S = 1000003;
  CollectiveRequest r = make_request(CollectiveOp::broadcast, "ring", test::first_gpus(n), S);
  r.root = 3;
  const auto b = schedule_traffic(build_schedule(r, g));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(b.received[i], i == 3 ? 0u : S) << i;
    EXPECT_EQ(b.sent[i], i == 2 ? 0u : S) << i;   // the chain 3 -> 4 -> ... -> 2 ends at rank 2
  }
  // Reduce: the same chain towards the root, 4 -> 5 -> ... -> 2 -> 3, each hop a partial sum of S.
  r.op = CollectiveOp::reduce;
  const auto d = schedule_traffic(build_schedule(r, g));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(d.sent[i], i == 3 ? 0u : S) << i;      // the root only receives
    EXPECT_EQ(d.received[i], i == 4 ? 0u : S) << i;  // the chain starts at the rank after the root
  }
  const auto p = schedule_traffic(build(CollectiveOp::send_recv, "ring", g, test::first_gpus(n), S));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(p.sent[i], S);
    EXPECT_EQ(p.received[i], S);
  }
}

// Hierarchical NVLS over D domains of d GPUs: a GPU sends S to the switch (reduce-scatter), its slice S/d
// to the switch again (all-gather) and 2(D-1)/D * S/d over its NIC (outer ring).
TEST(Traffic, HierarchicalSendsOnlyTheSliceAcrossDomains) {
  const auto g = test::shipped("gb200-nvl72", 2);
  const int d = 72, D = 2;
  const std::uint64_t S = 144ULL * 1024 * 1024;  // S/d divisible by D
  CollectiveRequest r = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(d * D), S, S);
  const auto t = schedule_traffic(build_schedule(r, g));
  for (int i = 0; i < d * D; ++i) EXPECT_EQ(t.sent[i], S + S / d + 2 * (D - 1) * (S / d) / D) << i;
}

// The budgets: a 72-GPU ring all-reduce of 1 GiB at most ~20 k tasks, 576 GPUs hierarchical at most ~100 k
// (default pipelining counts transfers: 20 k flat, 250 k hierarchical).
TEST(TaskCounts, WithinTheBudgets) {
  const std::uint64_t GiB = 1ULL << 30;
  const auto g1 = test::shipped("gb200-nvl72");
  const Schedule ring = build(CollectiveOp::all_reduce, "ring", g1, test::first_gpus(72), GiB);
  EXPECT_EQ(ring.tasks.size(), 2u * 71 * 72);  // 10 224: one task per rank per step
  const Schedule nvls = build(CollectiveOp::all_reduce, "nvls", g1, test::first_gpus(72), GiB);
  EXPECT_LE(nvls.tasks.size(), 20000u);
  EXPECT_EQ(nvls.tasks.size() % 73, 0u);        // k chunks x (72 up + 1 multicast)
  const Schedule tree = build(CollectiveOp::all_reduce, "tree", g1, test::first_gpus(72), GiB);
  EXPECT_LE(tree.tasks.size(), 20000u);
  const auto g8 = test::shipped("gb200-nvl72", 8);
  for (const char* inner : {"nvls", "ring"}) {
    CollectiveRequest r = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(576), GiB);
    r.inner_algorithm = inner;
    const Schedule h = build_schedule(r, g8);
    EXPECT_LE(h.tasks.size(), 100000u) << inner;
    EXPECT_GT(h.tasks.size(), 8000u) << inner;  // the outer rings alone: 72 positions x 2 x 7 x 8
  }
}

}  // namespace
}  // namespace racksim
