// Placement rules beyond self-check 1: NUMA policies, the driver's kinds, the OOM killer's choice,
// non-coherent and integrated systems, and the min_free_kbytes reserve against the guide's 17 GB.
#include <gtest/gtest.h>

#include "memory_test_support.hpp"
#include "models/memory/placement.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::memory {
namespace {


struct PlacementFixture {
  TrayMemoryModel tray;
  PlacementResult res;
  int node(const std::string& id) const { return tray.find_node(id); }
  std::uint64_t at(std::size_t alloc, const std::string& id) const {
    const auto& p = res.allocations.at(alloc).placed;
    const auto it = p.find(node(id));
    return it == p.end() ? 0 : it->second;
  }
};

// Placement with no OS reserve and a fixed 0 min_free so the numbers are exact capacities.
PlacementFixture place(const std::vector<std::string>& specs, MemoryMode mode = MemoryMode::numa, const std::string& system = "gb200-nvl72",
              std::uint64_t swap = 0) {
  TuningSettings t = TuningSettings::untuned();
  t.min_free_kbytes = 0;
  t.swap_bytes = swap;
  TrayAssumptions a;
  a.os_reserved_GB_per_cpu_node = 0;
  PlacementFixture f{TrayMemoryModel(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(system), mode, t, a), {}};
  std::vector<AllocationRequest> reqs;
  for (const auto& s : specs) reqs.push_back(parse_allocation(s, f.tray, "--alloc"));
  f.res = place_allocations(f.tray, reqs);
  return f;
}

TEST(PlacementRules, LocalFillsTheTouchingNodeFirst) {
  const auto f = place({"a:cpu:500GB:cpu1"});
  EXPECT_EQ(f.at(0, "cpu1"), 480 * GB);
  EXPECT_EQ(f.at(0, "cpu0"), 20 * GB);
  EXPECT_EQ(f.res.allocations[0].off_target_bytes, 20 * GB);
}

TEST(PlacementRules, BindIsStrictAndItsOomIsConstrained) {
  const auto f = place({"other:cpu:300GB:cpu1", "a:cpu:500GB:bind=cpu0"});
  const auto& a = f.res.allocations[1];
  EXPECT_EQ(a.outcome, Outcome::oom_killed);          // never falls back to cpu1 or HBM
  EXPECT_EQ(f.at(1, "cpu0"), 480 * GB);
  EXPECT_EQ(a.swap_needed_bytes, 20 * GB);
  // A bind policy's OOM is constrained: the allocating task goes, not the other process.
  EXPECT_EQ(f.res.allocations[0].outcome, Outcome::placed);
}

TEST(PlacementRules, BindToAGpuNodeInNumaModeLandsInHbm) {
  const auto f = place({"a:cpu:100GB:bind=gpu2"});
  EXPECT_EQ(f.at(0, "gpu2"), 100 * GB);
  EXPECT_EQ(f.res.allocations[0].spilled_to_gpu_bytes, 100 * GB);
}

TEST(PlacementRules, BindToAGpuNodeInCdmmIsEinval) {
  const auto f = place({"a:cpu:100GB:bind=gpu2"}, MemoryMode::cdmm);
  EXPECT_EQ(f.res.allocations[0].outcome, Outcome::failed);
  EXPECT_NE(f.res.allocations[0].reason.find("EINVAL"), std::string::npos);
}

TEST(PlacementRules, InterleaveSplitsEvenlyThenFallsBackAlongEachNodesZonelist) {
  auto f = place({"a:cpu:300GB:interleave=cpu0,cpu1"});
  EXPECT_EQ(f.at(0, "cpu0"), 150 * GB);
  EXPECT_EQ(f.at(0, "cpu1"), 150 * GB);
  // cpu1 already holds 400 GB: its 300 GB share puts 80 GB on cpu1, then cpu1's zonelist: cpu0 first
  // (distance 40 + 1 for a lower id with CPUs beats gpu2 at 80).
  f = place({"b:cpu:400GB:cpu1", "a:cpu:600GB:interleave=cpu0,cpu1"});
  EXPECT_EQ(f.at(1, "cpu1"), 80 * GB);
  EXPECT_EQ(f.at(1, "cpu0"), 480 * GB);  // its own 300 GB share + 180 GB of cpu1's
  EXPECT_EQ(f.at(1, "gpu2"), 40 * GB);   // then cpu1's own GPU node (80) before gpu0/gpu1 (120)
  EXPECT_EQ(f.at(1, "gpu0") + f.at(1, "gpu1") + f.at(1, "gpu3"), 0u);
}

TEST(PlacementRules, PreferredFallsBackFromThePreferredNode) {
  const auto f = place({"a:cpu:200GB:preferred=gpu3"});
  EXPECT_EQ(f.at(0, "gpu3"), kHbm);
  // gpu3's zonelist: cpu1 (its own Grace, 80 + 1 CPU penalty + 1 lower id) before the other GPUs (120).
  EXPECT_EQ(f.at(0, "cpu1"), 200 * GB - kHbm);
}

TEST(PlacementRules, OomKillerTakesTheLargestProcess) {
  // CDMM: 960 GB of LPDDR. 'big' holds 700 GB; 'small' asks for 400 GB: the kernel kills 'big'.
  const auto f = place({"big:cpu:700GB", "small:cpu:400GB:cpu1"}, MemoryMode::cdmm);
  EXPECT_EQ(f.res.allocations[0].outcome, Outcome::oom_killed);
  EXPECT_NE(f.res.allocations[0].reason.find("'small'"), std::string::npos);
  EXPECT_EQ(f.res.allocations[1].outcome, Outcome::placed);
  EXPECT_EQ(f.res.nodes[f.node("cpu0")].used_bytes + f.res.nodes[f.node("cpu1")].used_bytes, 400 * GB);
}

TEST(PlacementRules, ManagedOversubscribesHbmIntoItsGrace) {
  const auto f = place({"m:managed:250GB:gpu1"}, MemoryMode::cdmm);
  EXPECT_EQ(f.at(0, "gpu1"), kHbm);
  EXPECT_EQ(f.at(0, "cpu0"), 250 * GB - kHbm);  // gpu1 hangs off cpu0
  EXPECT_EQ(f.res.allocations[0].evicted_to_host_bytes, 250 * GB - kHbm);
  EXPECT_EQ(f.res.nodes[f.node("gpu1")].driver_bytes, kHbm);  // nvidia-smi counts managed residency
}

TEST(PlacementRules, PinnedStaysOnCpuNodesAndFailsRatherThanSpill) {
  const auto f = place({"p:pinned:1000GB"});
  EXPECT_EQ(f.res.allocations[0].outcome, Outcome::failed);
  EXPECT_EQ(f.res.nodes[f.node("gpu0")].used_bytes, 0u);
  EXPECT_EQ(f.res.nodes[f.node("cpu0")].used_bytes, 0u);  // a failed allocation holds nothing
}

TEST(PlacementRules, EgmIsStrictOnItsHostNode) {
  const auto f = place({"e:egm:400GB:cpu1", "f:egm:100GB:cpu1"});
  EXPECT_EQ(f.at(0, "cpu1"), 400 * GB);
  EXPECT_EQ(f.res.allocations[1].outcome, Outcome::failed);  // 80 GB left on cpu1; no fallback to cpu0
  EXPECT_EQ(f.res.allocations[0].cgroup_charged_bytes, 0u);   // assumption: driver memory, not charged
}

TEST(PlacementRules, PcieSystemNeverSpillsOntoGpus) {
  // HGX H100: two 1 TB DDR5 sockets, PCIe GPUs: NUMA mode changes nothing.
  const auto f = place({"a:cpu:2100GB", "b:cuda:80GB:gpu0"}, MemoryMode::numa, "hgx-h100");
  EXPECT_EQ(f.res.allocations[0].outcome, Outcome::oom_killed);
  EXPECT_EQ(f.res.allocations[0].spilled_to_gpu_bytes, 0u);
  EXPECT_EQ(f.res.allocations[1].outcome, Outcome::placed);
  EXPECT_EQ(f.res.k8s_node_capacity_bytes, 2048 * GB);
  EXPECT_FALSE(f.res.k8s_hbm_counted);
}

TEST(PlacementRules, IntegratedGpuCudaMallocTakesSystemMemory) {
  const auto f = place({"a:cuda:100GB:gpu0", "b:cuda:40GB:gpu0"}, MemoryMode::cdmm, "dgx-spark");
  EXPECT_EQ(f.at(0, "cpu0"), 100 * GB);
  EXPECT_EQ(f.res.allocations[1].outcome, Outcome::failed);  // 128 GB of LPDDR5X in all
}

TEST(MinFree, Gh200With512MiBThpReproducesTheGuides17GB) {
  // seed s5: "THP makes khugepaged raise the free-memory reserve (17 GB observed in the guide)".
  // GH200 in NUMA mode, 64 KiB kernel, THP always: zones DMA + Normal (Grace) + the GPU node = 3;
  // 3 x 11 x 512 MiB = 17 716 740 096 B (cap 5% of 582 GB = 29.1 GB not reached).
  TuningSettings t = TuningSettings::untuned();
  t.page_size_bytes = 65536;
  t.thp_pmd = ThpSetting::always;
  const TrayMemoryModel tray(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gh200"), MemoryMode::numa, t, TrayAssumptions{});
  EXPECT_EQ(tray.zones_counted(), 3);
  EXPECT_EQ(tray.min_free_bytes(), 3ULL * 11 * (512ULL << 20));
  EXPECT_NEAR(tray.min_free_bytes() / 1e9, 17.7, 0.05);
  // The reserve applies to the GPU node too (seed s5), by size: the Grace gets 480 GB of 480 GB + the
  // GPU's 97280 MiB as the driver reports it, the GPU node (the last) the rest.
  const std::uint64_t gpu = 97280ULL << 20;
  const auto grace = static_cast<std::uint64_t>(static_cast<unsigned __int128>(tray.min_free_bytes()) * (480 * GB) / (480 * GB + gpu));
  EXPECT_EQ(tray.node(tray.find_node("gpu0")).watermark_bytes, tray.min_free_bytes() - grace);
  EXPECT_EQ(tray.node(tray.find_node("gpu0")).numa_id, 1);  // seed s2: GH200's GPU is node 1
}

TEST(MinFree, GuideTuningKeepsTheKernelDefault) {
  const auto spec = SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72");
  const TrayMemoryModel probe(spec, MemoryMode::cdmm, TuningSettings::untuned(), TrayAssumptions{});
  const TrayMemoryModel tray(spec, MemoryMode::cdmm, TuningSettings::guide(probe.gpu_memory_bytes()), TrayAssumptions{});
  // 960 GB = 937 500 000 kB -> int_sqrt(16 x) = 122 474 kB; THP never: khugepaged does not raise it.
  EXPECT_EQ(tray.min_free_bytes(), 122474ULL * 1024);
  EXPECT_EQ(tray.tuning().swap_bytes, 4 * kHbm / 4);  // 1/4 of the tray's GPU memory (the guide)
}

TEST(NumaIds, GpuIdsFollowTheAssumptions) {
  TrayAssumptions a;
  a.gpu_numa_first_id = 2;
  a.gpu_numa_stride = 8;  // GH200-style MIG placeholders between GPUs
  const TrayMemoryModel tray(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), MemoryMode::numa, TuningSettings::untuned(), a);
  EXPECT_EQ(tray.node(tray.find_node("gpu3")).numa_id, 26);
  EXPECT_EQ(tray.find_node("node10"), tray.find_node("gpu1"));
}

}  // namespace
}  // namespace racksim::memory
