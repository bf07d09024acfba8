// The seed's offload example (course module 5, s4): "A 70B model's fp32 Adam states (~840 GB) fit in one
// tray's LPDDR5X, and streaming them over C2C costs seconds per step where PCIe Gen4 would take tens of
// seconds." Worked numbers: 70e9 x 12 B = 840 GB; states read and written back once per step.
#include <gtest/gtest.h>

#include "models/memory/offload.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::memory {
namespace {

TopologySpec load(const std::string& id) { return SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(id); }

OffloadRequest adam70b(std::vector<std::string> gpus = {"gpu0"}, OffloadLink link = OffloadLink::topology) {
  OffloadRequest q;
  q.params = parse_param_count("70B", "--params");
  q.offload_optimizer = true;
  q.gpus = std::move(gpus);
  q.link = link;
  return q;
}

const double kPcie4 = 16e9 * 16 * 128.0 / 130.0 / 8;  // 31.51 GB/s per direction (PCI-SIG)

TEST(Offload, SeedExample70BAdamStatesFitInOneTrayAndStreamInSecondsOverC2C) {
  const auto r = offload_step(load("gb200-nvl72"), adam70b());
  EXPECT_DOUBLE_EQ(r.optimizer_bytes, 840e9);
  EXPECT_DOUBLE_EQ(r.offloaded_bytes, 840e9);
  EXPECT_TRUE(r.fits_host);                       // 2 x (480 - 8 GB OS - 0.06 GB reserve) = 943.9 GB free
  EXPECT_GT(r.offloaded_bytes, 480e9);            // ... but not in one Grace: it spans both
  EXPECT_EQ(r.host_placement.size(), 2u);
  EXPECT_DOUBLE_EQ(r.h2d_bytes, 840e9);
  EXPECT_DOUBLE_EQ(r.d2h_bytes, 840e9);
  // One GPU: all 840 GB each way through its C2C at 450 GB/s per direction.
  EXPECT_NEAR(r.step_s, 840e9 / 450e9, 1e-9);     // 1.87 s: "seconds per step"
  EXPECT_EQ(r.bottleneck.rfind("c2c", 0), 0u) << r.bottleneck;
}

TEST(Offload, SeedExamplePcieGen4TakesTensOfSeconds) {
  const auto c2c = offload_step(load("gb200-nvl72"), adam70b());
  const auto gen4 = offload_step(load("gb200-nvl72"), adam70b({"gpu0"}, OffloadLink::pcie4));
  const auto gen5 = offload_step(load("gb200-nvl72"), adam70b({"gpu0"}, OffloadLink::pcie5));
  EXPECT_NEAR(gen4.step_s, 840e9 / kPcie4, 1e-6);  // 26.66 s
  EXPECT_GE(gen4.step_s, 20.0);
  EXPECT_NEAR(gen5.step_s, 840e9 / (2 * kPcie4), 1e-6);  // 13.33 s
  EXPECT_NEAR(gen4.step_s / c2c.step_s, 450e9 / kPcie4, 1e-9);  // 14.3x
}

TEST(Offload, FourGpusOfATrayAreBoundByLpddr) {
  const auto r = offload_step(load("gb200-nvl72"), adam70b({"gpu0", "gpu1", "gpu2", "gpu3"}));
  // Each Grace holds 420 GB for its two GPUs and serves 420 GB in + 420 GB out per step at 512 GB/s;
  // each shared C2C carries 420 GB per direction (0.93 s).
  EXPECT_NEAR(r.step_s, 840e9 / 512e9, 1e-9);     // 1.64 s
  EXPECT_EQ(r.bottleneck.rfind("LPDDR5X", 0), 0u) << r.bottleneck;
  EXPECT_DOUBLE_EQ(r.hbm_resident_per_gpu_bytes, 70e9);  // bf16 weights + grads, 4-way sharded
  EXPECT_TRUE(r.fits_hbm);
}

TEST(Offload, TwoGpusSharingOneC2C) {
  const auto shared = offload_step(load("gb200-nvl72"), adam70b({"gpu0", "gpu1"}));
  EXPECT_NEAR(shared.step_s, 840e9 / 450e9, 1e-9);  // both shards through C2C c2c0: no faster than one GPU
  TrayAssumptions own;
  own.c2c_shared = false;
  const auto separate = offload_step(load("gb200-nvl72"), adam70b({"gpu0", "gpu1"}), own);
  EXPECT_LT(separate.step_s, shared.step_s);
  EXPECT_EQ(separate.bottleneck.rfind("LPDDR5X cpu0", 0), 0u) << separate.bottleneck;
  const auto split = offload_step(load("gb200-nvl72"), adam70b({"gpu0", "gpu2"}));  // one GPU per superchip
  EXPECT_NEAR(split.step_s, 840e9 / 512e9, 1e-9);
}

TEST(Offload, Gb300KeepsTheSameStreamingTimeButFitsTheRestInHbm) {
  const auto gb200 = offload_step(load("gb200-nvl72"), adam70b());
  const auto gb300 = offload_step(load("gb300-nvl72"), adam70b());
  // Same C2C (900 GB/s bidirectional) and LPDDR5X on both: same time per step.
  EXPECT_NEAR(gb300.step_s, gb200.step_s, 1e-12);
  // What stays on the one GPU: bf16 weights + grads = 280 GB: over B200's 186 GB, under B300's 288 GB.
  EXPECT_DOUBLE_EQ(gb200.hbm_resident_per_gpu_bytes, 280e9);
  EXPECT_FALSE(gb200.fits_hbm);
  EXPECT_TRUE(gb300.fits_hbm);
}

TEST(Offload, HidingBehindCompute) {
  OffloadRequest q = adam70b();
  q.compute_time_s = 5;
  const auto c2c = offload_step(load("gb200-nvl72"), q);
  EXPECT_TRUE(c2c.hidden);
  EXPECT_DOUBLE_EQ(c2c.exposed_s, 0);
  q.link = OffloadLink::pcie4;
  const auto gen4 = offload_step(load("gb200-nvl72"), q);
  EXPECT_FALSE(gen4.hidden);
  EXPECT_NEAR(gen4.exposed_s, 840e9 / kPcie4 - 5, 1e-6);
}

TEST(Offload, KvCacheIsReadEveryStep) {
  OffloadRequest q;
  q.kv_bytes = 500e9;
  q.offload_kv = true;
  const auto r = offload_step(load("gb200-nvl72"), q);
  EXPECT_DOUBLE_EQ(r.h2d_bytes, 500e9);
  EXPECT_DOUBLE_EQ(r.d2h_bytes, 0);
  EXPECT_NEAR(r.step_s, 500e9 / 450e9, 1e-9);
}

TEST(Offload, X86HostUsesItsPcieLink) {
  const auto r = offload_step(load("hgx-h100"), adam70b());
  EXPECT_EQ(r.link, "pcie (topology)");
  EXPECT_NEAR(r.step_s, 840e9 / 63e9, 1e-6);  // the topology's PCIe Gen5 x16: 63 GB/s per direction
}

TEST(Offload, BadRequests) {
  const auto spec = load("gb200-nvl72");
  OffloadRequest q = adam70b();
  q.offload_optimizer = false;
  EXPECT_THROW(offload_step(spec, q), InputError);   // nothing offloaded
  EXPECT_THROW(offload_step(spec, adam70b({"gpu7"})), InputError);
  EXPECT_THROW(offload_step(spec, adam70b({"gpu0", "gpu0"})), InputError);
  q = adam70b();
  q.link_efficiency = 0;
  EXPECT_THROW(offload_step(spec, q), InputError);
  EXPECT_THROW(parse_param_count("70X", "--params"), InputError);
  EXPECT_THROW(parse_param_count("-7B", "--params"), InputError);
  EXPECT_DOUBLE_EQ(parse_param_count("1.5T", "--params"), 1.5e12);
  EXPECT_THROW(offload_link_from_string("nvlink", "--link"), InputError);
}

}  // namespace
}  // namespace racksim::memory
