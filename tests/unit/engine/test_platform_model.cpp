// The platform as plain data: which SimGrid links the graph becomes, their bandwidths after calibration,
// and the routes over them.
#include <gtest/gtest.h>

#include <set>

#include "engine_test_support.hpp"
#include "models/collectives/rank_placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {
namespace {

TEST(PlatformModel, OneSplitDuplexPortPerGpuAndOneLinkPerC2CGroup) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const PlatformModel m(g, Calibration::none(), {});
  int ports = 0, c2c = 0, pcie = 0, nic = 0;
  for (const auto& l : m.links()) {
    if (l.name.find("nvlink-port") != std::string::npos) ++ports;
    if (l.kind == "c2c") {
      ++c2c;
      EXPECT_EQ(l.edges.size(), 2u) << l.name;  // the two GPUs of one superchip
      EXPECT_NEAR(l.bandwidth_Bps, 450e9, 1);
    }
    if (l.kind == "pcie") ++pcie;
    if (l.kind == "nic") ++nic;
  }
  EXPECT_EQ(ports, 72);
  EXPECT_EQ(c2c, 36);
  EXPECT_EQ(pcie, 72);
  EXPECT_EQ(nic, 72);
  EXPECT_EQ(m.links()[m.port_link(5)].name, "r0.t1.gpu1.nvlink-port");
  EXPECT_EQ(m.links()[m.port_link(5)].edges.size(), 18u);  // its links to the 18 switch chips
  EXPECT_EQ(m.host(m.switch_plane_host(0)).name, "nvswitch-plane.d0");
  EXPECT_EQ(m.switch_plane_host(1), -1);
}

TEST(PlatformModel, RoutesFollowTheGraph) {
  const auto g = test::load_graph("gb200-nvl72", 2);
  const PlatformModel m(g, Calibration::none(), {});
  const PlatformRoute& in_domain = m.route(m.gpu_host(0), m.gpu_host(71));
  ASSERT_EQ(in_domain.links.size(), 2u);
  EXPECT_EQ(in_domain.links[0], (LinkUse{m.port_link(0), true}));
  EXPECT_EQ(in_domain.links[1], (LinkUse{m.port_link(71), false}));
  EXPECT_NEAR(in_domain.latency_s, 0.47e-6, 1e-15);
  const PlatformRoute& up = m.route(m.gpu_host(3), m.switch_plane_host(0));
  const PlatformRoute& down = m.route(m.switch_plane_host(0), m.gpu_host(3));
  EXPECT_NEAR(up.latency_s + down.latency_s, 0.47e-6, 1e-15);  // one switch round trip = one GPU-GPU hop
  const PlatformRoute& across = m.route(m.gpu_host(0), m.gpu_host(72));
  std::vector<std::string> kinds;
  for (const auto& use : across.links) kinds.push_back(m.links()[use.link].kind);
  // GB200's NICs hang off the Grace CPUs: GPU -C2C-> Grace -PCIe-> NIC (NCCL's P2C path).
  EXPECT_EQ(kinds, (std::vector<std::string>{"c2c", "pcie", "nic", "ib", "ib", "nic", "pcie", "c2c"}));
  EXPECT_NEAR(across.latency_s, find_route(g, g.gpu_vertex(0), g.gpu_vertex(72)).latency_s, 1e-15);
  EXPECT_THROW(m.route(m.gpu_host(0), m.switch_plane_host(1)), InputError);  // not its domain
}

TEST(PlatformModel, MulticastGroupRouteIsEveryMembersPort) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const PlatformModel m(g, Calibration::none(), {});
  const std::vector<int> members = {m.gpu_host(0), m.gpu_host(1), m.gpu_host(2)};
  const int group = m.multicast_group(members);
  EXPECT_EQ(m.multicast_group(members), group);
  const PlatformRoute& r = m.route(m.switch_plane_host(0), group);
  ASSERT_EQ(r.links.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.links[i], (LinkUse{m.port_link(i), false}));
  EXPECT_NEAR(r.latency_s, m.route(m.switch_plane_host(0), m.gpu_host(0)).latency_s, 0);
}

TEST(PlatformModel, CalibrationScalesBandwidthAndAddsLatencyPerHop) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  Calibration c;
  c.name = "test";
  LinkCalibration nvlink;
  nvlink.bandwidth_efficiency = 0.8;
  nvlink.extra_latency_us = 0.25;
  nvlink.source = "test";
  c.links[LinkKind::nvlink] = nvlink;
  const PlatformModel m(g, c, {});
  EXPECT_NEAR(m.links()[m.port_link(0)].bandwidth_Bps, 720e9, 1);
  EXPECT_NEAR(m.links()[m.port_link(0)].nominal_Bps, 900e9, 1);
  EXPECT_NEAR(m.route(m.gpu_host(0), m.gpu_host(1)).latency_s, 0.47e-6 + 2 * 0.25e-6, 1e-15);
}

TEST(PlaceRanks, InOrderOverTraysAndEvenlyOverRacks) {
  const auto one = test::load_graph("gb200-nvl72", 1);
  EXPECT_EQ(place_ranks(one, 8), test::gpu_range(0, 8));
  const auto two = test::load_graph("gb200-nvl72", 2);
  std::vector<int> expected = test::gpu_range(0, 4);
  for (int g : test::gpu_range(72, 4)) expected.push_back(g);
  EXPECT_EQ(place_ranks(two, 8), expected);  // 4 per rack, from each rack's first tray
  EXPECT_EQ(place_ranks(two, 144).back(), 143);
  EXPECT_THROW(place_ranks(two, 7), InputError);    // not a multiple of 2 racks
  EXPECT_THROW(place_ranks(one, 73), InputError);   // above the 72 GPUs present
  EXPECT_THROW(place_ranks(one, 0), InputError);
  try {
    place_ranks(two, 146);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--gpus");
    EXPECT_EQ(e.value(), "146");
  }
}

}  // namespace
}  // namespace racksim
