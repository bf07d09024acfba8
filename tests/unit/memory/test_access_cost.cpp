// Access cost per path on a GB200 tray (topology peaks: HBM 8000 GB/s, C2C 450 GB/s per direction
// shared by two GPUs, Grace-Grace 450 GB/s, LPDDR5X 512 GB/s, NVLink 18 x 50 GB/s), ATS translation with
// 4 KiB vs 64 KiB pages, init_on_alloc zeroing, and the tuning checklist.
#include <gtest/gtest.h>

#include "models/memory/access_cost.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::memory {
namespace {

TrayMemoryModel gb200(MemoryMode mode = MemoryMode::numa, TuningSettings t = TuningSettings::untuned(), TrayAssumptions a = {}) {
  return TrayMemoryModel(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72"), mode, t, a);
}

PathCost path(const TrayMemoryModel& t, const std::string& from, const std::string& to, bool system_allocated = false) {
  return access_path(t, t.find_node(from), t.find_node(to), system_allocated);
}

TEST(AccessCost, GpuPaths) {
  const auto t = gb200();
  auto p = path(t, "gpu0", "gpu0");
  EXPECT_EQ(p.path, "local HBM");
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 8000e9);
  EXPECT_DOUBLE_EQ(p.latency_s, 0.6e-6);
  p = path(t, "gpu0", "cpu0");  // C2C to its own Grace: min(C2C 450, LPDDR 512); both GPUs streaming: 225
  EXPECT_EQ(p.path, "C2C to local cpu0");
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(p.shared_bandwidth_Bps, 225e9);
  EXPECT_NEAR(p.latency_s, (0.5 + 0.12) * 1e-6, 1e-15);
  p = path(t, "gpu1", "cpu1");  // C2C then Grace-Grace
  EXPECT_EQ(p.path, "C2C to remote cpu1");
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 450e9);
  EXPECT_NEAR(p.latency_s, (0.5 + 0.5 + 0.12) * 1e-6, 1e-15);
  EXPECT_EQ(p.hops.size(), 3u);
  p = path(t, "gpu0", "gpu3");  // NVLink through the switch: 0.2 + 0.07 + 0.2 us, then HBM
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 900e9);
  EXPECT_NEAR(p.latency_s, (0.47 + 0.6) * 1e-6, 1e-15);
}

TEST(AccessCost, CpuReadingPagesTheKernelSpilledOntoHbm) {
  const auto t = gb200();
  auto p = path(t, "cpu0", "gpu1");
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 450e9);  // C2C, not HBM's 8 TB/s
  EXPECT_NEAR(p.latency_s, (0.5 + 0.6) * 1e-6, 1e-15);
  p = path(t, "cpu0", "gpu2");  // the other superchip: Grace-Grace, then its C2C
  EXPECT_NEAR(p.latency_s, (0.5 + 0.5 + 0.6) * 1e-6, 1e-15);
  p = path(t, "cpu0", "cpu0");
  EXPECT_DOUBLE_EQ(p.bandwidth_Bps, 512e9);
}

TEST(AccessCost, UnsharedC2CAssumption) {
  TrayAssumptions a;
  a.c2c_shared = false;
  const auto t = gb200(MemoryMode::numa, TuningSettings::untuned(), a);
  EXPECT_DOUBLE_EQ(path(t, "gpu0", "cpu0").shared_bandwidth_Bps, 450e9);
}

TEST(AccessCost, AtsTranslationWith4KiBVs64KiBPages) {
  const auto t4 = gb200();
  TuningSettings t = TuningSettings::untuned();
  t.page_size_bytes = 65536;
  const auto t64 = gb200(MemoryMode::numa, t);
  const std::uint64_t gib = 1ULL << 30;
  const PathCost p4 = path(t4, "gpu0", "cpu0", true), p64 = path(t64, "gpu0", "cpu0", true);
  EXPECT_TRUE(p4.via_ats);
  const StreamCost s4 = stream_cost(t4, p4, gib), s64 = stream_cost(t64, p64, gib);
  // TLB reach: 2048 entries x 4 KiB = 8 MiB, x 64 KiB = 128 MiB.
  EXPECT_DOUBLE_EQ(s4.tlb_reach_bytes, 8.0 * 1048576);
  EXPECT_DOUBLE_EQ(s64.tlb_reach_bytes, 128.0 * 1048576);
  // One miss per page, 2 us each, 64 overlapped: 262 144 x 2 us / 64 = 8.192 ms; 16 384 pages: 0.512 ms.
  EXPECT_DOUBLE_EQ(s4.misses, 262144);
  EXPECT_NEAR(s4.translation_s, 8.192e-3, 1e-12);
  EXPECT_NEAR(s64.translation_s, 0.512e-3, 1e-12);
  EXPECT_NEAR(s4.transfer_s, gib / 450e9, 1e-15);
  EXPECT_NEAR(s4.seconds, gib / 450e9 + 8.192e-3, 1e-12);
  // cudaMalloc'd / pinned memory goes through the GPU's own page tables (2 MiB): 512 misses.
  const StreamCost pinned = stream_cost(t4, path(t4, "gpu0", "cpu0", false), gib);
  EXPECT_DOUBLE_EQ(pinned.misses, 512);
}

TEST(AccessCost, InitOnAllocZeroingOnlyWhereTheKernelHandsOutHbm) {
  const std::uint64_t b = 100000000000ULL;
  EXPECT_DOUBLE_EQ(cuda_malloc_zeroing_s(gb200(), b), 5.0);  // 100 GB at 20 GB/s (assumption)
  EXPECT_DOUBLE_EQ(cuda_malloc_zeroing_s(gb200(MemoryMode::cdmm), b), 0.0);
  TuningSettings t = TuningSettings::untuned();
  t.init_on_alloc = false;
  EXPECT_DOUBLE_EQ(cuda_malloc_zeroing_s(gb200(MemoryMode::numa, t), b), 0.0);
  const TrayMemoryModel hgx(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("hgx-h100"), MemoryMode::numa, TuningSettings::untuned(), {});
  EXPECT_DOUBLE_EQ(cuda_malloc_zeroing_s(hgx, b), 0.0);
}

TEST(TuningChecklist, UntunedNumaTrayWarnsGuideCdmmTrayPasses) {
  auto untuned = tuning_checklist(gb200());
  ASSERT_EQ(untuned.size(), 9u);
  std::vector<bool> ok;
  for (const auto& i : untuned) ok.push_back(i.ok);
  // page size, THP (fine on a 4K kernel), init_on_alloc, numa_balancing, CDMM, swap, min_free/compaction, iommu, cpufreq
  EXPECT_EQ(ok, (std::vector<bool>{false, true, false, false, false, false, false, false, false}));
  EXPECT_DOUBLE_EQ(untuned[2].number, 5.0);        // s of zeroing per 100 GB cudaMalloc
  EXPECT_DOUBLE_EQ(untuned[3].number, 65536);      // 256 MB scan / 4 KiB pages per second
  EXPECT_DOUBLE_EQ(untuned[4].number, (960e9 + 4 * 189471.0 * (1 << 20)) / 1e9);  // GB MemTotal with HBM (driver bytes)
  // Page size effect: (t + 8.192 ms) / (t + 0.512 ms), t = 1 GiB / 450 GB/s.
  const double t = (1ULL << 30) / 450e9;
  EXPECT_NEAR(untuned[0].number, (t + 8.192e-3) / (t + 0.512e-3), 1e-9);
  const auto spec = SystemCatalog(RACKSIM_TOPOLOGY_DIR).load("gb200-nvl72");
  const auto guide = tuning_checklist(gb200(MemoryMode::cdmm, TuningSettings::guide(744000000000ULL)));
  for (const auto& i : guide) EXPECT_TRUE(i.ok) << i.setting << ": " << i.value;
  EXPECT_DOUBLE_EQ(guide[2].number, 0.0);
}

TEST(TuningChecklist, ThpOnA64KKernelRaisesTheReserveOntoGpuNodes) {
  TuningSettings t = TuningSettings::untuned();
  t.page_size_bytes = 65536;
  t.thp_pmd = ThpSetting::always;
  const auto tray = gb200(MemoryMode::numa, t);
  // 7 zones (2 Grace + DMA + 4 GPU nodes) x 11 x 512 MiB = 41.34 GB, under 5% of 1754.7 GB (87.7 GB).
  EXPECT_EQ(tray.min_free_bytes(), 7ULL * 11 * (512ULL << 20));
  const auto items = tuning_checklist(tray);
  EXPECT_FALSE(items[1].ok);
  // 4 GPU nodes' share of it, by size (HBM as the driver reports it: 189471 MiB each).
  const double hbm = 189471.0 * (1 << 20), kernel = 960e9 + 4 * hbm;
  EXPECT_NEAR(items[6].number, 7.0 * 11 * (512 << 20) * 4 * hbm / kernel / 1e9, 1e-6);
}

}  // namespace
}  // namespace racksim::memory
