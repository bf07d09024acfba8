// How NCCL 2.28.9 stripes an all-to-all's point-to-point operations over its channels (models/nccl/nccl_p2p),
// against plans worked out by hand from its source (tag v2.28.9-1): paths.cc:817-886 (p2p channels and
// channels per peer), init.cc:716-718 (chunk), enqueue.cc:891-900 and 1053-1056 (an operation's channels),
// enqueue.cc:961-965 with device.h:364 (8 operations per channel at a time). And what the calibrated rate of
// one pipeline then adds to an all-to-all's time, in the closed form and in the engine alike.
#include <gtest/gtest.h>

#include "../collectives/collective_test_support.hpp"
#include "models/analytic/analytic_model.hpp"
#include "models/collectives/exec_terms.hpp"
#include "models/nccl/nccl_p2p.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

constexpr double MiB = 1024.0 * 1024.0, GiB = 1024.0 * MiB;

nccl::P2pPlan plan(const std::string& system, int racks, const std::vector<int>& gpus, double bytes_per_rank) {
  const auto g = test::shipped(system, racks);
  const nccl::NcclSystem s = nccl::nccl_system(g, gpus);
  return nccl::p2p_plan(s, nccl::compute_graphs(s), bytes_per_rank / static_cast<double>(gpus.size()));
}

// 8 H100s: 24 collective channels -> p2pnChannels 32; a peer over 18 NVLinks gets 36 -> 32 per peer;
// nChannelsMin 32 -> 4 (4 x 8 ranks = 32). A peer's part is at most 32 x 512 KiB = 16 MiB inside a node,
// so 4 channels up to 64 MiB per peer (512 MiB per rank), then 8, 16, 32.
TEST(NcclP2p, EightH100sStripeLargerPeersOverMoreChannels) {
  const nccl::P2pPlan small = plan("hgx-h100", 1, test::first_gpus(8), 64 * MiB);
  EXPECT_EQ(small.p2p_channels, 32);
  EXPECT_EQ(small.channels_per_peer, 32);
  EXPECT_EQ(small.min_channels_per_op, 4);
  EXPECT_EQ(small.chunk_bytes, 512 * 1024);
  EXPECT_EQ(small.op_channels, 4);
  EXPECT_EQ(small.concurrent_pipelines, 28);
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 512 * MiB).op_channels, 4);
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 1 * GiB).op_channels, 8);
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 2 * GiB).op_channels, 16);
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 4 * GiB).op_channels, 32);
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 16 * GiB).concurrent_pipelines, 224);
  // A small operation takes one channel per 64 KiB (an eighth of a chunk) up to nChannelsMin.
  EXPECT_EQ(plan("hgx-h100", 1, test::first_gpus(8), 8 * 64 * 1024).op_channels, 1);
}

// 64 GPUs of one GB300 rack: nChannelsMin 1 (32 channels for 64 ranks), so one channel per peer until a part
// exceeds 16 MiB (1 GiB per rank); 63 operations run at once, 2 per channel.
TEST(NcclP2p, SixtyFourGpusOfARackTakeOneChannelPerPeer) {
  const nccl::P2pPlan p = plan("gb300-nvl72", 1, test::first_gpus(64), 1 * GiB);
  EXPECT_EQ(p.min_channels_per_op, 1);
  EXPECT_EQ(p.op_channels, 1);
  EXPECT_EQ(p.concurrent_pipelines, 63);
  EXPECT_EQ(plan("gb300-nvl72", 1, test::first_gpus(64), 2 * GiB).op_channels, 2);
  // At most 8 operations per channel at a time: 32 x 8.
  EXPECT_EQ(plan("gb300-nvl72", 1, test::first_gpus(64), 16 * GiB).concurrent_pipelines, 256);
}

// Across nodes the chunk is the network's 128 KiB and a part at most one chunk; a peer across the network
// gets 2 channels, halved while 2 x ranks > 4 x 32: two HGX B300 nodes 2, two GB300 racks of 64 GPUs 1.
TEST(NcclP2p, AcrossNodesTheNetworkSetsChunkAndChannelsPerPeer) {
  const nccl::P2pPlan two_nodes = plan("hgx-b300", 2, test::first_gpus(16), 8 * GiB);
  EXPECT_EQ(two_nodes.chunk_bytes, 128 * 1024);
  EXPECT_EQ(two_nodes.channels_per_peer, 2);
  EXPECT_EQ(two_nodes.op_channels, 2);
  EXPECT_EQ(two_nodes.concurrent_pipelines, 30);
  std::vector<int> racks;
  for (int i = 0; i < 64; ++i) racks.push_back(i);
  for (int i = 0; i < 64; ++i) racks.push_back(72 + i);
  const nccl::P2pPlan two_racks = plan("gb300-nvl72", 2, racks, 8 * GiB);
  EXPECT_EQ(two_racks.channels_per_peer, 1);
  EXPECT_EQ(two_racks.concurrent_pipelines, 127);
  EXPECT_EQ(nccl::p2p_plan(nccl::NcclSystem{}, nccl::Graphs{}, 1e6).concurrent_pipelines, 0);  // one rank
}

Calibration pipelines_at(double GBps) {
  Calibration c;
  c.name = "test";
  AlgorithmCalibration a;
  a.p2p_pipeline_GBps = GBps;
  c.algorithms["all_to_all/direct"] = a;
  return c;
}

// At a pipeline rate R the bandwidth time grows by (bytes a GPU sends / pipelines) / R: 8 H100s at 64 MiB per
// rank send 56 MiB each over 28 pipelines, 2 MiB each, so 100 GB/s adds 20.97 us. The engine, whose flows take
// the same scale, meets the closed form; the result says so; a rate of 0 changes nothing.
TEST(NcclP2p, PipelineRateAddsItsTimeInTheClosedFormAndTheEngine) {
  const auto g = test::shipped("hgx-h100", 1);
  CollectiveRequest r = test::make_request(CollectiveOp::all_to_all, "direct", test::first_gpus(8), std::uint64_t{64} << 20);
  const double extra_s = 56.0 * MiB / 28 / 100e9;
  const ExecTerms e = exec_terms(g, r, pipelines_at(100));
  EXPECT_EQ(e.p2p_pipelines, 28);
  EXPECT_NEAR(e.p2p_extra_s, extra_s, 1e-12);
  const AnalyticEstimate none = analytic_collective(g, r, pipelines_at(0));
  const AnalyticEstimate with = analytic_collective(g, r, pipelines_at(100));
  EXPECT_NEAR(with.bandwidth_s - none.bandwidth_s, extra_s, 1e-9);
  EXPECT_NEAR(with.time_s - none.time_s, extra_s, 1e-9);
  EXPECT_NE(with.note.find("28 p2p pipelines per GPU over NVLink at 100 GB/s each"), std::string::npos);
  EXPECT_EQ(none.note.find("p2p pipelines"), std::string::npos);
  const double engine = simulate_collective(g, r, pipelines_at(100)).time_s;
  EXPECT_NEAR(engine / with.time_s, 1.0, 0.02);
  // Other algorithms carry no pipelines.
  EXPECT_EQ(p2p_pipeline_bytes(g, test::make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 26)), 0.0);
}

// Across nodes only the peers of a GPU's own NVLink domain count: a peer across the network is fed through a
// buffer the NIC reads, so its copy runs ahead of the wire. On two HGX B300 nodes a GPU's 7 local peers take 2
// channels each (14 pipelines) and the all-to-all, bound by its NICs (half of what a GPU sends crosses one
// 800 Gb/s NIC), keeps its time at a rate that slows the NVLink part; one GPU per node has no local pipeline.
TEST(NcclP2p, AcrossNodesOnlyTheNvlinkPeersPipelinesCountAndTheNicsStillBind) {
  const auto g = test::shipped("hgx-b300", 2);
  std::vector<int> two_nodes = test::first_gpus(8);
  for (int i = 8; i < 16; ++i) two_nodes.push_back(i);
  const CollectiveRequest r = test::make_request(CollectiveOp::all_to_all, "direct", two_nodes, std::uint64_t{8} << 30);
  int pipelines = 0;
  const double bytes = p2p_pipeline_bytes(g, r, &pipelines);
  EXPECT_EQ(pipelines, 14);
  EXPECT_DOUBLE_EQ(bytes, 8.0 * GiB * 7 / 16 / 14);
  const double none = analytic_collective(g, r, pipelines_at(0)).time_s;
  EXPECT_NEAR(analytic_collective(g, r, pipelines_at(70)).time_s / none, 1.0, 1e-6);
  EXPECT_NEAR(simulate_collective(g, r, pipelines_at(70)).time_s / none, 1.0, 0.02);
  EXPECT_EQ(p2p_pipeline_bytes(g, test::make_request(CollectiveOp::all_to_all, "direct", {0, 8}, std::uint64_t{1} << 30)), 0.0);
}

}  // namespace
}  // namespace racksim
