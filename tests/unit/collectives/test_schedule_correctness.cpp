// Symbolic correctness of every algorithm: the checker executes the schedule and must find nothing,
// at several rank counts, sizes not divisible by n, sizes smaller than n, and with pipelining.
#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

using test::make_request;

struct Case {
  std::string name;
  CollectiveOp op;
  std::string algo;
  std::string system;
  int racks;
  std::vector<int> gpus;
  std::uint64_t bytes;
  std::uint64_t chunk = 0;
  std::string inner = "auto", outer = "ring";
  int root = 0;
};

std::string join_violations(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

class ScheduleCorrect : public ::testing::TestWithParam<Case> {};

TEST_P(ScheduleCorrect, SymbolicExecutionFindsNoViolation) {
  const Case& c = GetParam();
  const auto graph = test::shipped(c.system, c.racks);
  CollectiveRequest r = make_request(c.op, c.algo, c.gpus, c.bytes, c.chunk);
  r.inner_algorithm = c.inner;
  r.outer_algorithm = c.outer;
  r.root = c.root;
  const Schedule s = build_schedule(r, graph);
  EXPECT_EQ(s.algorithm, std::string(to_string(c.op)) + "/" + c.algo);
  if (c.gpus.size() > 1) {
    EXPECT_FALSE(s.tasks.empty());
  }
  // The analytic model plans the same task count (it sizes the budgets and the depth) for the request
  // as resolved (NCCL's chunk pipelines tree and NVLS).
  if (c.algo != "auto") {
    EXPECT_EQ(static_cast<long>(s.tasks.size()), planned_depth(graph, resolve_request(r, graph).request).tasks);
  }
  const auto violations = check_schedule(s);
  EXPECT_TRUE(violations.empty()) << join_violations(violations);
}

// enqueue.cc:1802: NVLS all-gather and reduce-scatter need at most NCCL_MAX_NVLS_ARITY (32) local ranks;
// asked for on a 72-GPU domain racksim says so instead of modelling what NCCL would not run.
TEST(NvlsArityLimit, AllGatherAndReduceScatterOnMoreThan32GpusPerNodeAreRefusedWithTheReason) {
  const auto graph = test::shipped("gb200-nvl72", 1);
  for (CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    const CollectiveRequest r = make_request(op, "nvls", test::first_gpus(72), 1 << 20);
    try {
      build_schedule(r, graph);
      ADD_FAILURE() << "no error for " << to_string(op);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("at most 32 GPUs per node"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(build_schedule(make_request(op, "nvls", test::first_gpus(32), 1 << 20), graph));
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::uint64_t odd = 1000003;  // prime: divisible by no rank count
  struct Flat {
    CollectiveOp op;
    const char* algo;
  };
  const Flat flats[] = {{CollectiveOp::all_reduce, "ring"},     {CollectiveOp::all_reduce, "nvls"},
                        {CollectiveOp::all_reduce, "tree"},     {CollectiveOp::all_gather, "ring"},
                        {CollectiveOp::all_gather, "nvls"},     {CollectiveOp::reduce_scatter, "ring"},
                        {CollectiveOp::reduce_scatter, "nvls"}, {CollectiveOp::all_to_all, "direct"},
                        {CollectiveOp::broadcast, "ring"},      {CollectiveOp::send_recv, "ring"},
                        {CollectiveOp::reduce, "ring"}};
  for (const auto& f : flats)
    for (int n : {2, 3, 8, 32, 72}) {
      // NCCL runs NVLS all-gather / reduce-scatter on at most 32 GPUs per node (NvlsArityLimit below).
      const bool nvls_rs_ag = std::string(f.algo) == "nvls" && f.op != CollectiveOp::all_reduce;
      if ((n == 32) != nvls_rs_ag && (n == 32 || n == 72)) continue;
      const std::string base = std::string(to_string(f.op)) + "_" + f.algo + "_n" + std::to_string(n);
      out.push_back({base + "_odd", f.op, f.algo, "gb200-nvl72", 1, test::first_gpus(n), odd});
      out.push_back({base + "_tiny", f.op, f.algo, "gb200-nvl72", 1, test::first_gpus(n), 5});
      out.push_back({base + "_chunked", f.op, f.algo, "gb200-nvl72", 1, test::first_gpus(n), odd, 40000});
    }
  out.push_back({"all_reduce_ring_n1", CollectiveOp::all_reduce, "ring", "gb200-nvl72", 1, {5}, odd});
  out.push_back({"broadcast_root5_n8", CollectiveOp::broadcast, "ring", "gb200-nvl72", 1, test::first_gpus(8), odd, 30000,
                 "auto", "ring", 5});
  out.push_back({"reduce_root5_n8", CollectiveOp::reduce, "ring", "gb200-nvl72", 1, test::first_gpus(8), odd, 30000,
                 "auto", "ring", 5});
  // Broadcast and reduce across nodes: one chain per NIC rail, each cut open at the root.
  out.push_back({"broadcast_root3_hgx_2x8", CollectiveOp::broadcast, "ring", "hgx-h100", 2, test::first_gpus(16), odd, 0,
                 "auto", "ring", 3});
  out.push_back({"reduce_root3_hgx_2x8", CollectiveOp::reduce, "ring", "hgx-h100", 2, test::first_gpus(16), odd, 0,
                 "auto", "ring", 3});
  out.push_back({"reduce_hgx_3x8_tiny", CollectiveOp::reduce, "ring", "hgx-h100", 3, test::first_gpus(24), 5});
  out.push_back({"all_reduce_ring_hgx8_1GiB", CollectiveOp::all_reduce, "ring", "hgx-h100", 1, test::first_gpus(8), 1ULL << 30});
  out.push_back({"all_reduce_nvls_hgx8_1GiB", CollectiveOp::all_reduce, "nvls", "hgx-h100", 1, test::first_gpus(8), 1ULL << 30});
  out.push_back({"all_reduce_tree_n72_1GiB", CollectiveOp::all_reduce, "tree", "gb200-nvl72", 1, test::first_gpus(72), 1ULL << 30});
  // Flat algorithms across racks (the routes cross NICs; the schedule is the same shape).
  out.push_back({"all_reduce_ring_2racks", CollectiveOp::all_reduce, "ring", "gb200-nvl72", 2, test::first_gpus(144), odd});
  // Hierarchical: gb200-nvl72 2 racks x 72 and hgx-h100 2 nodes x 8, every inner/outer pair.
  for (const char* inner : {"ring", "nvls"})
    for (const char* outer : {"ring", "tree"}) {
      const std::string io = std::string(inner) + "_" + outer;
      out.push_back({"hier_gb200_2x72_" + io, CollectiveOp::all_reduce, "hierarchical", "gb200-nvl72", 2,
                     test::first_gpus(144), odd, 0, inner, outer});
      out.push_back({"hier_hgx_2x8_" + io, CollectiveOp::all_reduce, "hierarchical", "hgx-h100", 2, test::first_gpus(16),
                     odd, 0, inner, outer});
      out.push_back({"hier_hgx_2x8_blocks_" + io, CollectiveOp::all_reduce, "hierarchical", "hgx-h100", 2,
                     test::first_gpus(16), odd, 100000, inner, outer});
      out.push_back({"hier_hgx_3x3_" + io, CollectiveOp::all_reduce, "hierarchical", "hgx-h100", 3, test::spread(3, 3, 8),
                     odd, 0, inner, outer});
      out.push_back({"hier_hgx_5x2_tiny_" + io, CollectiveOp::all_reduce, "hierarchical", "hgx-h100", 5,
                     test::spread(2, 5, 8), 7, 0, inner, outer});
    }
  // CollNet (IB SHARP): every rank's NIC on the fabric, heads of every share on one rail; odd and tiny sizes,
  // pipelined, several nodes, and the NVL72's 72-GPU domains (18 shares per NIC rail) for NVLS over CollNet, the
  // only CollNet algorithm NCCL runs with more than 8 GPUs per node (enqueue.cc:1798-1801; tests/unit/nccl).
  for (const char* algo : {"collnet_direct", "collnet_chain", "nvls_collnet"}) {
    const std::string a = algo;
    out.push_back({a + "_hgx_2x8", CollectiveOp::all_reduce, a, "hgx-b200", 2, test::first_gpus(16), odd});
    out.push_back({a + "_hgx_4x8_blocks", CollectiveOp::all_reduce, a, "hgx-b200", 4, test::first_gpus(32), odd, 100000});
    out.push_back({a + "_hgx_3x8_tiny", CollectiveOp::all_reduce, a, "hgx-h100", 3, test::first_gpus(24), 5});
  }
  out.push_back({"nvls_collnet_gb200_2x72", CollectiveOp::all_reduce, "nvls_collnet", "gb200-nvl72", 2, test::first_gpus(144), odd});
  out.push_back({"hier_hgx_3x8_nvls_sharp", CollectiveOp::all_reduce, "hierarchical", "hgx-b200", 3, test::first_gpus(24),
                 odd, 0, "nvls", "sharp"});
  out.push_back({"hier_hgx_2x8_ring_sharp_blocks", CollectiveOp::all_reduce, "hierarchical", "hgx-b200", 2, test::first_gpus(16),
                 odd, 100000, "ring", "sharp"});
  out.push_back({"hier_one_gpu_per_domain", CollectiveOp::all_reduce, "hierarchical", "hgx-h100", 4, test::spread(1, 4, 8), odd});
  out.push_back({"hier_one_domain", CollectiveOp::all_reduce, "hierarchical", "gb200-nvl72", 1, test::first_gpus(8), odd});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ScheduleCorrect, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace racksim
