// Seed course module 5, self-check 1, as a golden test with the numbers worked out here:
// "On a GB200 tray in NUMA mode, a CPU-only preprocessing job grows to 1.1 TB. What happens to it, and
// to the training job on the same tray?" -- the kernel fills both Grace nodes (~960 GB), spills onto
// the GPU nodes' HBM, the training job's next cudaMalloc fails while nvidia-smi shows free memory, only
// swap gets the pages back, Kubernetes counted HBM all along. CDMM: the CPU job hits the OOM killer
// within LPDDR and the GPUs are untouched.
#include <gtest/gtest.h>

#include "memory_test_support.hpp"
#include "models/memory/placement.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::memory {
namespace {

TrayMemoryModel selfcheck_tray(MemoryMode mode, TuningSettings tuning = TuningSettings::untuned()) {
  return TrayMemoryModel(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), mode, tuning, TrayAssumptions{});
}

PlacementResult run(const TrayMemoryModel& tray, const std::vector<std::string>& specs) {
  std::vector<AllocationRequest> reqs;
  for (const auto& s : specs) reqs.push_back(parse_allocation(s, tray, "--alloc"));
  return place_allocations(tray, reqs);
}

const std::vector<std::string> kScenario = {
    "train0:cuda:100GB:gpu0", "train1:cuda:100GB:gpu1", "train2:cuda:100GB:gpu2", "train3:cuda:100GB:gpu3",
    "prep:cpu:1100GB",  // first touch from cpu0
    "train_next:cuda:40GB:gpu0"};

// Worked numbers, untuned kernel (4 KiB pages, THP madvise), NUMA mode, with each GPU's HBM as the driver
// reports it (kHbm, memory_test_support.hpp):
//   kernel memory = 2 x 480 GB + 4 x 198 674 743 296 B = 1 754 698 973 184 B = 1 713 573 216 kB;
//   min_free_kbytes = int_sqrt(16 x 1 713 573 216) = 165 581 kB (khugepaged's 7 zones x 11 x 2 MiB =
//   157 696 kB is lower); split by size: Grace 165 581 x 1024 x 480e9 / 1 754 698 973 184 = 46 381 957 B,
//   GPU 165 581 x 1024 x 198 674 743 296 / 1 754 698 973 184 = 19 197 757 B.
constexpr std::uint64_t kKernelBytes = 2 * 480 * GB + 4 * kHbm;
constexpr std::uint64_t kMinFreeNuma = 165581ULL * 1024;
constexpr std::uint64_t kWmGraceNuma =
    static_cast<std::uint64_t>(static_cast<unsigned __int128>(kMinFreeNuma) * (480 * GB) / kKernelBytes);
constexpr std::uint64_t kWmGpuNuma = static_cast<std::uint64_t>(static_cast<unsigned __int128>(kMinFreeNuma) * kHbm / kKernelBytes);
static_assert(kWmGraceNuma == 46381957 && kWmGpuNuma == 19197757);
constexpr std::uint64_t kOs = 8 * GB;  // TrayAssumptions::os_reserved_GB_per_cpu_node

TEST(SelfCheck1, NumaModeMinFreeAndWatermarks) {
  const auto tray = selfcheck_tray(MemoryMode::numa);
  EXPECT_EQ(tray.min_free_bytes(), kMinFreeNuma);
  EXPECT_EQ(tray.zones_counted(), 7);
  EXPECT_EQ(tray.node(tray.find_node("cpu0")).watermark_bytes, kWmGraceNuma);
  EXPECT_EQ(tray.node(tray.find_node("gpu0")).watermark_bytes, kWmGpuNuma);
  // The kernel's fallback order from cpu0: the other Grace before any HBM, the own superchip's GPUs first.
  const std::vector<int> order = tray.fallback_order(0);
  std::vector<std::string> names;
  for (int n : order) names.push_back(tray.node(n).id);
  EXPECT_EQ(names, (std::vector<std::string>{"cpu0", "cpu1", "gpu0", "gpu1", "gpu2", "gpu3"}));
}

TEST(SelfCheck1, NumaModeCpuJobSpillsOntoHbmAndNextCudaMallocFails) {
  const auto tray = selfcheck_tray(MemoryMode::numa);
  const auto res = run(tray, kScenario);
  const auto& prep = res.allocations[4];
  const int cpu0 = 0, cpu1 = 1, gpu0 = tray.find_node("gpu0"), gpu1 = tray.find_node("gpu1");
  const std::uint64_t grace_free = 480 * GB - kOs - kWmGraceNuma;
  const std::uint64_t gpu0_free = kHbm - 100 * GB - kWmGpuNuma;
  EXPECT_FALSE(prep.failed());
  EXPECT_EQ(prep.placed.at(cpu0), grace_free);
  EXPECT_EQ(prep.placed.at(cpu1), grace_free);
  // Both Grace nodes hold ~944 GB of it (960 GB less the OS reserve and watermarks).
  EXPECT_NEAR(static_cast<double>(2 * grace_free), 944e9, 0.2e9);
  EXPECT_EQ(prep.placed.at(gpu0), gpu0_free);
  EXPECT_EQ(prep.placed.at(gpu1), 1100 * GB - 2 * grace_free - gpu0_free);
  EXPECT_EQ(prep.spilled_to_gpu_bytes, 1100 * GB - 2 * grace_free);
  EXPECT_NEAR(static_cast<double>(prep.spilled_to_gpu_bytes), 156.09e9, 0.01e9);
  EXPECT_EQ(prep.placed.count(tray.find_node("gpu2")), 0u);

  const auto& next = res.allocations[5];
  EXPECT_TRUE(next.failed());
  EXPECT_NE(next.reason.find("cudaErrorMemoryAllocation"), std::string::npos);
  EXPECT_NE(next.reason.find("nvidia-smi shows 100.0 GB used"), std::string::npos) << next.reason;
  EXPECT_EQ(next.swap_needed_bytes, 40 * GB);  // the spilled pages to swap out so that 40 GB fit
  // nvidia-smi's view of gpu0: only the training job's 100 GB; the kernel's pages are invisible to it.
  EXPECT_EQ(res.nodes[gpu0].driver_bytes, 100 * GB);
  EXPECT_EQ(res.nodes[gpu0].kernel_pages_bytes, gpu0_free);
  EXPECT_EQ(res.nodes[gpu0].free_bytes, 0u);
  // Kubernetes: MemTotal includes HBM; the pod is charged for the CPU job and the HBM it cudaMalloc'd.
  EXPECT_TRUE(res.k8s_hbm_counted);
  EXPECT_EQ(res.k8s_node_capacity_bytes, kKernelBytes);
  EXPECT_EQ(res.k8s_pod_usage_bytes, 1100 * GB + 400 * GB);
}

TEST(SelfCheck1, NumaModeWithSwapTheKernelReclaimsTheSpilledPages) {
  TuningSettings t = TuningSettings::untuned();
  t.swap_bytes = 200 * GB;
  const auto tray = selfcheck_tray(MemoryMode::numa, t);
  const auto res = run(tray, kScenario);
  const auto& next = res.allocations[5];
  ASSERT_FALSE(next.failed()) << next.reason;
  EXPECT_EQ(next.reclaimed_bytes, 40 * GB);
  EXPECT_EQ(res.allocations[4].swapped_bytes, 40 * GB);
  EXPECT_EQ(res.swap_used_bytes, 40 * GB);
  // init_on_alloc=1: the kernel zeroes 40 GB from the CPU at 20 GB/s (assumption): 2 s.
  EXPECT_DOUBLE_EQ(next.zeroing_s, 2.0);
}

// CDMM: kernel memory = 960 GB = 937 500 000 kB; min_free = int_sqrt(16 x 937 500 000) = 122 474 kB,
// half on each Grace node.
TEST(SelfCheck1, CdmmCpuJobIsOomKilledWithinLpddrAndGpusAreUntouched) {
  const auto tray = selfcheck_tray(MemoryMode::cdmm);
  const std::uint64_t min_free = 122474ULL * 1024;
  EXPECT_EQ(tray.min_free_bytes(), min_free);
  const auto res = run(tray, kScenario);
  const auto& prep = res.allocations[4];
  EXPECT_EQ(prep.outcome, Outcome::oom_killed);
  EXPECT_EQ(prep.placed.at(0), 480 * GB - kOs - min_free / 2);
  EXPECT_EQ(prep.placed.at(1), 480 * GB - kOs - min_free / 2);
  EXPECT_EQ(prep.spilled_to_gpu_bytes, 0u);
  EXPECT_EQ(prep.swap_needed_bytes, 1100 * GB - (960 * GB - 2 * kOs - min_free));
  EXPECT_NE(prep.reason.find("GPUs untouched"), std::string::npos);
  const auto& next = res.allocations[5];
  EXPECT_FALSE(next.failed()) << next.reason;
  EXPECT_EQ(next.zeroing_s, 0.0);  // the driver, not the kernel, hands out HBM
  const int gpu0 = tray.find_node("gpu0");
  EXPECT_EQ(res.nodes[gpu0].used_bytes, 140 * GB);
  EXPECT_EQ(res.nodes[gpu0].kernel_pages_bytes, 0u);
  EXPECT_FALSE(res.k8s_hbm_counted);
  EXPECT_EQ(res.k8s_node_capacity_bytes, 960 * GB);
  EXPECT_EQ(res.k8s_pod_usage_bytes, 0u);  // the CPU job is dead; HBM is not charged in CDMM
}

TEST(SelfCheck1, CdmmWithEnoughSwapTheCpuJobSurvivesInSwap) {
  TuningSettings t = TuningSettings::untuned();
  t.swap_bytes = 200 * GB;
  const auto tray = selfcheck_tray(MemoryMode::cdmm, t);
  const auto res = run(tray, kScenario);
  const auto& prep = res.allocations[4];
  EXPECT_EQ(prep.outcome, Outcome::placed);
  EXPECT_EQ(prep.swapped_bytes, prep.swap_needed_bytes);
  EXPECT_EQ(prep.swapped_bytes + prep.placed_bytes(), 1100 * GB);
}

}  // namespace
}  // namespace racksim::memory
