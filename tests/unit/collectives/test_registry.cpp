// The registry and build_schedule: names, auto, and every kind of bad input as an InputError that names
// the option and what is allowed.
#include <gtest/gtest.h>

#include <tuple>

#include "collective_test_support.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/nccl_choice.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

using test::make_request;

// Runs build_schedule and returns the InputError's message ("" if none was thrown).
std::string error_of(const CollectiveRequest& r, const TopologyGraph& g) {
  try {
    build_schedule(r, g);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const CollectiveRequest& r, const TopologyGraph& g, std::initializer_list<const char*> parts) {
  const std::string what = error_of(r, g);
  ASSERT_FALSE(what.empty()) << "expected an InputError";
  for (const char* p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
}

TEST(Registry, OneTableWithEveryAlgorithm) {
  EXPECT_EQ(algorithm_names(CollectiveOp::all_reduce),
            (std::vector<std::string>{"ring", "nvls", "tree", "nvls_tree", "collnet_direct", "collnet_chain", "nvls_collnet", "hierarchical"}));
  EXPECT_EQ(algorithm_names(CollectiveOp::all_gather), (std::vector<std::string>{"ring", "nvls"}));
  EXPECT_EQ(algorithm_names(CollectiveOp::all_to_all), (std::vector<std::string>{"direct"}));
  EXPECT_EQ(find_algorithm(CollectiveOp::send_recv, "ring").name, "ring");
  EXPECT_EQ(find_algorithm(CollectiveOp::reduce, "ring").nccl_name, std::string("Ring"));
  EXPECT_EQ(algorithm_table().size(), 16u);
  // NCCL's name for each of its algorithms (NCCL_ALGO), none for racksim's own.
  EXPECT_EQ(find_algorithm(CollectiveOp::all_reduce, "nvls_tree").nccl_name, std::string("NVLSTree"));
  EXPECT_EQ(find_algorithm(CollectiveOp::all_reduce, "hierarchical").nccl_name, std::string());
  EXPECT_EQ(find_algorithm(CollectiveOp::all_reduce, "collnet_direct").nccl_name, std::string("CollNetDirect"));
  EXPECT_EQ(find_algorithm(CollectiveOp::all_reduce, "collnet_chain").nccl_name, std::string("CollNetChain"));
}

// Issue 11: an algorithm registered without a cost model would be priced at 0 us and could win; every row
// must carry both its schedule builder and its closed form, and the closed form must price a real request.
TEST(Registry, EveryRowHasABuilderAndACostModel) {
  const auto g = test::shipped("gb200-nvl72", 2);
  for (const AlgorithmInfo& a : algorithm_table()) {
    EXPECT_NE(a.build, nullptr) << to_string(a.op) << "/" << a.name;
    ASSERT_NE(a.cost, nullptr) << to_string(a.op) << "/" << a.name;
  }
  const CollectiveRequest r = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 20);
  const CostModel m = find_algorithm(r.op, "ring").cost(g, r, Calibration::none(), FlowTerms{});
  EXPECT_GT(m.time(1), 0);
}

TEST(Registry, UnknownAlgorithmListsTheValidNames) {
  const auto g = test::shipped("gb200-nvl72");
  expect_error(make_request(CollectiveOp::all_reduce, "butterfly", test::first_gpus(8), 1024), g,
               {"--algo", "'butterfly'", "auto, ring, nvls, tree, nvls_tree, collnet_direct, collnet_chain, nvls_collnet, hierarchical", "all_reduce"});
  expect_error(make_request(CollectiveOp::all_to_all, "ring", test::first_gpus(8), 1024), g, {"auto, direct"});
}

TEST(Registry, NvlsNeedsAMulticastSwitch) {
  expect_error(make_request(CollectiveOp::all_reduce, "nvls", {0}, 1024), test::shipped("rtx4090-pcie"),
               {"--algo", "nvls", "no NVLink switch"});
  const auto no_nvls = test::test_system("hgx-no-nvls");
  expect_error(make_request(CollectiveOp::all_reduce, "nvls", test::first_gpus(8), 1024), no_nvls,
               {"--algo", "NVLS/Simple", "multicast_reduction is false"});
  expect_error(make_request(CollectiveOp::all_gather, "nvls", test::first_gpus(8), 1024), no_nvls,
               {"multicast_reduction is false"});
  CollectiveRequest h = make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(16), 1024);
  h.inner_algorithm = "nvls";
  expect_error(h, test::test_system("hgx-no-nvls", 2), {"--inner-algorithm", "ring or auto"});
  h.inner_algorithm = "auto";  // falls back to ring
  const Schedule s = build_schedule(h, test::test_system("hgx-no-nvls", 2));
  EXPECT_NE(s.note.find("inner ring"), std::string::npos) << s.note;
}

TEST(Registry, NvlsRanksMustShareOneDomain) {
  expect_error(make_request(CollectiveOp::all_reduce, "nvls", test::first_gpus(144), 1024), test::shipped("gb200-nvl72", 2),
               {"--algo", "one NVLink domain", "nvls_tree", "hierarchical"});
}

TEST(Registry, HierarchicalNeedsEvenlySpreadRanks) {
  const auto g = test::shipped("gb200-nvl72", 2);
  std::vector<int> gpus = test::first_gpus(72);
  for (int i = 0; i < 8; ++i) gpus.push_back(72 + i);
  expect_error(make_request(CollectiveOp::all_reduce, "hierarchical", gpus, 1 << 20), g,
               {"--gpus", "unevenly", "72 in domain 0, 8 in domain 1"});
  expect_error(make_request(CollectiveOp::all_reduce, "hierarchical", {0}, 1024), test::shipped("rtx4090-pcie"),
               {"NVLink domains"});
}

TEST(Registry, BytesOutOfRange) {
  const auto g = test::shipped("gb200-nvl72");
  expect_error(make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 0), g, {"--bytes", "0 bytes", "1 TiB"});
  expect_error(make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), (1ULL << 40) + 1), g,
               {"--bytes", "1099511627777 bytes"});
  EXPECT_EQ(error_of(make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1ULL << 40), g), "");
  expect_error(make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1024, (1ULL << 40) + 1), g,
               {"--chunk-bytes"});
}

TEST(Registry, RanksMustBeDistinctAndPresent) {
  const auto g = test::shipped("gb200-nvl72");
  expect_error(make_request(CollectiveOp::all_reduce, "ring", {0, 1, 1, 2}, 1024), g, {"--gpus", "GPU 1 listed twice"});
  expect_error(make_request(CollectiveOp::all_reduce, "ring", {0, 72}, 1024), g,
               {"--gpus", "GPU 72", "[0, 72)", "gb200-nvl72 x1"});
  expect_error(make_request(CollectiveOp::all_reduce, "ring", {-1, 0}, 1024), g, {"--gpus", "GPU -1"});
  expect_error(make_request(CollectiveOp::all_reduce, "ring", {}, 1024), g, {"--gpus", "at least 1"});
  expect_error(make_request(CollectiveOp::send_recv, "ring", {3}, 1024), g, {"--gpus", "at least 2", "send_recv"});
  CollectiveRequest b = make_request(CollectiveOp::broadcast, "ring", test::first_gpus(4), 1024);
  b.root = 4;
  expect_error(b, g, {"--root", "[0, 4)"});
  CollectiveRequest d = make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(4), 1024);
  d.dtype = "complex";
  expect_error(d, g, {"--dtype"});
  d.dtype = "float";
  d.outer_algorithm = "mesh";
  expect_error(d, g, {"--outer-algorithm", "ring, tree"});
}

TEST(Registry, AutoPicksAndSaysWhy) {
  const auto g = test::shipped("gb200-nvl72");
  const Schedule s = build_schedule(make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(72), 1ULL << 30), g);
  EXPECT_EQ(s.algorithm, "all_reduce/nvls");  // NCCL's own pick: S/B against ring's 2(n-1)/n S/B
  EXPECT_EQ(s.request.protocol, "Simple");
  EXPECT_NE(s.note.find("NCCL 2.28 picks: NVLS/Simple"), std::string::npos) << s.note;
  EXPECT_NE(s.note.find("Ring/Simple"), std::string::npos) << s.note;  // the candidates with NCCL's times
  EXPECT_TRUE(check_schedule(s).empty());
  const Schedule a2a = build_schedule(make_request(CollectiveOp::all_to_all, "auto", test::first_gpus(8), 4096), g);
  EXPECT_EQ(a2a.algorithm, "all_to_all/direct");
  // Across two racks NCCL runs NVLS inside each rack and trees across (NVLS-tree), never racksim's own
  // hierarchical.
  const Schedule two = build_schedule(
      make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(144), 1ULL << 30), test::shipped("gb200-nvl72", 2));
  EXPECT_EQ(two.algorithm, "all_reduce/nvls_tree") << two.note;
  EXPECT_NE(two.note.find("NCCL 2.28 picks: NVLSTree/Simple"), std::string::npos) << two.note;
  EXPECT_TRUE(check_schedule(two).empty());
  // The calibration scales the time of what runs, never the choice (NCCL's tuner does not read it).
  Calibration slow_nvls;
  slow_nvls.algorithms["all_reduce/nvls"].bandwidth_efficiency = 0.1;
  const Schedule calibrated = build_schedule(
      make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(72), 1ULL << 30), g, slow_nvls);
  EXPECT_EQ(calibrated.algorithm, "all_reduce/nvls") << calibrated.note;
  EXPECT_NEAR(calibrated.exec.efficiency, s.exec.efficiency * 0.1, 1e-12);
  // NCCL_NVLS_ENABLE=0 (--nvls off): NCCL's next choice.
  CollectiveRequest off = make_request(CollectiveOp::all_reduce, "auto", test::first_gpus(72), 1ULL << 30);
  off.nvls_enabled = false;
  EXPECT_EQ(build_schedule(off, g).algorithm, "all_reduce/ring");
}

// NCCL's tuner treats Reduce as Broadcast (Ring only, the same steps and latency: tuning.cc:273, 363-368), so
// auto resolves both alike at every size and placement: the protocol and channels NCCL would pick, equal.
TEST(Registry, AutoResolvesReduceAsBroadcast) {
  for (const auto& [system, racks, gpus] : std::vector<std::tuple<const char*, int, int>>{
           {"hgx-h100", 1, 8}, {"hgx-b200", 2, 16}, {"gb200-nvl72", 1, 72}, {"gb300-nvl72", 2, 144}})
    for (std::uint64_t bytes : {std::uint64_t{1} << 10, std::uint64_t{1} << 20, std::uint64_t{1} << 30}) {
      const auto g = test::shipped(system, racks);
      const NcclChoice b = resolve_request(make_request(CollectiveOp::broadcast, "auto", test::first_gpus(gpus), bytes), g);
      const NcclChoice r = resolve_request(make_request(CollectiveOp::reduce, "auto", test::first_gpus(gpus), bytes), g);
      EXPECT_EQ(r.request.algorithm, "ring") << system << " " << bytes;
      EXPECT_EQ(r.request.protocol, b.request.protocol) << system << " " << bytes;
      EXPECT_EQ(r.request.channels, b.request.channels) << system << " " << bytes;
      EXPECT_DOUBLE_EQ(r.nccl_time_us, b.nccl_time_us) << system << " " << bytes;
    }
}

}  // namespace
}  // namespace racksim
