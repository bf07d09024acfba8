// Every shipped system: it round-trips through topology_to_json_text, routes work from its first to its
// last GPU, and the numbers the spec sheets give come out of the graph. GB200 NVL36x2's two-rack domain
// (gpu_links_scope "rack" + switch-to-switch trunk) is checked link by link.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

const SystemCatalog& catalog() {
  static const SystemCatalog c(RACKSIM_TOPOLOGY_DIR);
  return c;
}

TEST(Systems, EveryIssueSystemIsShipped) {
  const auto ids = catalog().ids();
  const std::set<std::string> have(ids.begin(), ids.end());
  for (const char* id : {"gb200-nvl72", "gb300-nvl72", "gb200-nvl36x2", "hgx-h100", "hgx-h200", "hgx-b200", "hgx-b300",
                         "hgx-h800", "hgx-h20", "hgx-a100", "rtx4090-pcie", "gh200", "dgx-spark", "h200-pcie"})
    EXPECT_TRUE(have.count(id)) << id;
}

TEST(Systems, EveryFileRoundTripsThroughToJson) {
  for (const auto& id : catalog().ids()) {
    const TopologySpec spec = catalog().load(id);
    EXPECT_EQ(spec.id, id) << "the file name must be the id";
    const std::string once = topology_to_json_text(spec);
    const TopologySpec reread = topology_from_json_text(once, id + " (re-read)");
    const std::string twice = topology_to_json_text(reread);
    EXPECT_EQ(once, twice) << id;
    // Every field, not only the ones the writer knows: a field it leaves out reads back as its default.
    EXPECT_TRUE(reread == spec) << id << ": a field did not survive topology_to_json_text";
  }
}

// What one of --racks is called in what racksim prints: a node on HGX and single hosts, a rack on NVL72.
TEST(Systems, HgxCountsNodesNvl72CountsRacks) {
  EXPECT_EQ(catalog().load("hgx-h100").rack.count_label(8), "8 node(s)");
  EXPECT_EQ(catalog().load("aws-p5").rack.unit, "node");
  EXPECT_EQ(catalog().load("h200-pcie").rack.unit, "node");
  EXPECT_EQ(catalog().load("gb200-nvl72").rack.count_label(2), "2 rack(s)");
  EXPECT_EQ(catalog().load("gb200-nvl36x2").rack.unit, "rack");
}

// The planner checks a --gpus count against the domain size before it builds the graph (a count that does not
// split evenly is refused without building 1 389 racks): the spec's answer must be the graph's, on one rack or
// several, and known values hold (72 on NVL72 and NVL36x2, 8 on an HGX node, 1 on a single-GPU host).
TEST(Systems, DomainSizeFromTheSpecIsTheGraphs) {
  for (const auto& id : catalog().ids()) {
    const TopologySpec spec = catalog().load(id);
    const int domain_racks = std::max(1, spec.nvlink_domain ? spec.nvlink_domain->racks : 1);
    for (int racks : {domain_racks, 2 * domain_racks}) {
      if (racks > spec.rack.max_racks) continue;
      EXPECT_EQ(gpus_per_nvlink_domain(spec), TopologyGraph(spec, racks).gpus_per_domain()) << id << " on " << racks;
    }
  }
  EXPECT_EQ(gpus_per_nvlink_domain(catalog().load("gb200-nvl72")), 72);
  EXPECT_EQ(gpus_per_nvlink_domain(catalog().load("gb200-nvl36x2")), 72);
  EXPECT_EQ(gpus_per_nvlink_domain(catalog().load("hgx-h100")), 8);
  EXPECT_EQ(gpus_per_nvlink_domain(catalog().load("h200-pcie")), 1);
}

// Inside one NVLink domain the route is the GPU's NVLink port on both sides: nvlink_ports x link bandwidth,
// latency link + switch + link. Without a domain the only GPU has nothing to reach but its host CPU.
TEST(Systems, RouteFromFirstToLastGpuOfEverySystem) {
  for (const auto& id : catalog().ids()) {
    SCOPED_TRACE(id);
    const TopologySpec spec = catalog().load(id);
    const TopologyGraph g(spec, spec.rack.default_racks);
    const int first = g.gpu_vertex(0), last = g.gpu_vertex(g.gpu_count() - 1);
    if (!spec.nvlink_domain) {
      ASSERT_EQ(g.gpu_count(), 1);
      const Route r = find_route(g, first, g.cpu_of_gpu(first));
      ASSERT_EQ(r.hops.size(), 1u);
      const auto& link = spec.link_type(spec.tray.links[0].type);
      EXPECT_NEAR(r.bottleneck_Bps, units::GBps_to_Bps(link.bandwidth_GBps), 1);
      EXPECT_NEAR(r.latency_s, units::us_to_s(link.latency_us), 1e-15);
      continue;
    }
    const auto& d = *spec.nvlink_domain;
    const auto& nvlink = spec.link_type(d.link_type);
    const Route r = find_route(g, first, last);
    const bool crosses_trunk = d.gpu_links_scope == GpuLinksScope::rack;  // first and last sit in different racks
    ASSERT_EQ(r.hops.size(), crosses_trunk ? 3u : 2u);
    const int ports = spec.gpu_type(spec.tray.gpus[0].type).nvlink_ports;
    EXPECT_EQ(r.hops[0].links, ports);
    EXPECT_NEAR(r.bottleneck_Bps, ports * units::GBps_to_Bps(nvlink.bandwidth_GBps), 1);
    const double trunk_s = crosses_trunk ? units::us_to_s(d.inter_rack_latency_us + d.switch_latency_us) : 0;
    EXPECT_NEAR(r.latency_s, units::us_to_s(2 * nvlink.latency_us + d.switch_latency_us) + trunk_s, 1e-15);
  }
}

// Across NVLink domains a GPU reaches another over its NIC rail: the NIC port is the bottleneck.
TEST(Systems, RouteAcrossDomainsGoesThroughTheNics) {
  for (const auto& id : catalog().ids()) {
    const TopologySpec spec = catalog().load(id);
    if (!spec.scale_out || !spec.nvlink_domain) continue;
    SCOPED_TRACE(id);
    const TopologyGraph g(spec, 2 * spec.nvlink_domain->racks);
    const Route r = find_route(g, g.gpu_vertex(0), g.gpu_vertex(g.gpu_count() - 1));
    ASSERT_GE(r.hops.size(), 6u);
    // GPU -> [Grace over C2C ->] NIC: the NIC port comes after the PCIe hop (and the C2C hop on GB200).
    const bool via_grace = r.hops[0].kind == LinkKind::c2c;
    EXPECT_EQ(via_grace, id.rfind("gb200", 0) == 0);
    EXPECT_EQ(r.hops[via_grace ? 2 : 1].kind, LinkKind::nic);
    EXPECT_NEAR(r.bottleneck_Bps, units::GBps_to_Bps(spec.nic_type(spec.tray.nics[0].type).bandwidth_GBps), 1);
  }
}

// HGX H100 (DGX H100 spec: 8 GPUs, 4 NVSwitch chips, 18 NVLink 4 links of 25 GB/s each way per GPU).
TEST(Systems, HgxH100MatchesItsSpecSheet) {
  const TopologyGraph g(catalog().load("hgx-h100"), 1);
  const auto s = g.summary();
  EXPECT_EQ(s.gpus, 8);
  EXPECT_EQ(s.cpus, 2);
  EXPECT_EQ(s.switch_chips, 4);
  EXPECT_EQ(s.gpu_nvlinks, 8 * 18);
  EXPECT_EQ(s.nics, 8);
  EXPECT_NEAR(s.nvlink_aggregate_TBps, 8 * 18 * 25e9 * 2 / 1e12, 1e-9);  // 7.2 TB/s
  EXPECT_NEAR(s.hbm_total_TB, 8 * 81559.0 * 1048576 / 1e12, 1e-12);  // nvidia-smi's 81559 MiB per H100
  std::multiset<int> per_chip;
  for (int e : g.incident_edges(g.gpu_vertex(3))) per_chip.insert(g.edges()[e].links * (g.edges()[e].kind == LinkKind::nvlink));
  EXPECT_EQ(per_chip, (std::multiset<int>{0, 0, 4, 4, 5, 5}));  // 2 PCIe edges (host, NIC) + 5/4/4/5 NVLinks
}

TEST(Systems, MultiNodeHgxIsNodesOnTheRailFabric) {
  const auto s = TopologyGraph(catalog().load("hgx-b200"), 4).summary();
  EXPECT_EQ(s.gpus, 32);
  EXPECT_EQ(s.nvlink_domains, 4);
  EXPECT_EQ(s.gpus_per_domain, 8);
  EXPECT_NEAR(s.nvlink_aggregate_TBps, 4 * 14.4, 1e-9);  // DGX B200: 14.4 TB/s per node
}

TEST(Systems, IntegratedGpuAddsNoHbm) {
  const auto s = TopologyGraph(catalog().load("dgx-spark"), 1).summary();
  EXPECT_EQ(s.gpus, 1);
  EXPECT_EQ(s.hbm_total_TB, 0.0);
  EXPECT_NEAR(s.lpddr_total_TB, 0.128, 1e-12);  // seed s4: 128 GB LPDDR5x shared by CPU and GPU
}

// GB200 NVL36x2: two racks of 9 trays and 9 switch trays; each GPU's 18 links go to its own rack's 18
// chips; chip k of rack 0 and chip k of rack 1 are joined by 36 trunk links (as many as their GPU links).
TEST(Nvl36x2, CountsAreOneDomainOf72) {
  const auto s = TopologyGraph(catalog().load("gb200-nvl36x2"), 2).summary();
  EXPECT_EQ(s.gpus, 72);
  EXPECT_EQ(s.cpus, 36);
  EXPECT_EQ(s.trays, 18);
  EXPECT_EQ(s.switch_trays, 18);
  EXPECT_EQ(s.switch_chips, 36);
  EXPECT_EQ(s.gpu_nvlinks, 1296);
  EXPECT_EQ(s.nvlink_domains, 1);
  EXPECT_EQ(s.gpus_per_domain, 72);
  EXPECT_NEAR(s.nvlink_aggregate_TBps, 129.6, 1e-9);  // trunk links are not GPU NVLinks
}

TEST(Nvl36x2, EachGpuReachesOnlyItsOwnRacksChips) {
  const TopologyGraph g(catalog().load("gb200-nvl36x2"), 2);
  for (int i : {0, 35, 36, 71}) {
    const int gv = g.gpu_vertex(i);
    int links = 0, chips = 0;
    for (int e : g.incident_edges(gv)) {
      const auto& far = g.vertices()[g.other_end(e, gv)];
      if (far.kind != VertexKind::nvswitch) continue;
      ++chips;
      links += g.edges()[e].links;
      EXPECT_EQ(far.rack, g.vertices()[gv].rack) << g.edges()[e].name;
    }
    EXPECT_EQ(chips, 18);
    EXPECT_EQ(links, 18);
  }
  for (const auto& v : g.vertices()) {
    if (v.kind != VertexKind::nvswitch) continue;
    int gpu_links = 0, trunk_links = 0;
    for (int e : g.incident_edges(static_cast<int>(&v - g.vertices().data()))) {
      const auto& edge = g.edges()[e];
      const bool trunk = g.vertices()[edge.a].kind == VertexKind::nvswitch && g.vertices()[edge.b].kind == VertexKind::nvswitch;
      (trunk ? trunk_links : gpu_links) += edge.links;
      if (trunk) {
        EXPECT_NE(g.vertices()[edge.a].rack, g.vertices()[edge.b].rack);
      }
    }
    EXPECT_EQ(gpu_links, 36) << v.name;
    EXPECT_EQ(trunk_links, 36) << v.name;  // non-blocking trunk
  }
}

TEST(Nvl36x2, RoutesAcrossTheTrunkAddItsLatencyNotABottleneck) {
  const TopologySpec spec = catalog().load("gb200-nvl36x2");
  const TopologyGraph g(spec, 2);
  const Route same_rack = find_route(g, g.gpu_vertex(0), g.gpu_vertex(35));
  ASSERT_EQ(same_rack.hops.size(), 2u);
  EXPECT_NEAR(same_rack.bottleneck_Bps, 900e9, 1);
  EXPECT_NEAR(same_rack.latency_s, 0.47e-6, 1e-15);  // 0.2 + 0.07 + 0.2 us, as in the NVL72
  const Route across = find_route(g, g.gpu_vertex(0), g.gpu_vertex(36));
  ASSERT_EQ(across.hops.size(), 3u);
  EXPECT_EQ(across.hops[1].from_name, "nvswitch-plane.d0.r0");
  EXPECT_EQ(across.hops[1].to_name, "nvswitch-plane.d0.r1");
  EXPECT_EQ(across.hops[1].links, 18 * 36);
  EXPECT_EQ(across.hops[1].edges.size(), 18u);
  EXPECT_NEAR(across.hops[1].bandwidth_Bps, 18 * 36 * 50e9, 1);
  EXPECT_NEAR(across.bottleneck_Bps, 900e9, 1);  // the GPU port, not the trunk
  EXPECT_NEAR(across.latency_s, (0.47 + spec.nvlink_domain->inter_rack_latency_us + 0.07) * 1e-6, 1e-15);
  const Route back = find_route(g, g.gpu_vertex(71), g.gpu_vertex(0));
  EXPECT_NEAR(back.latency_s, across.latency_s, 1e-15);
}

TEST(Nvl36x2, RacksComeInPairs) {
  const TopologySpec spec = catalog().load("gb200-nvl36x2");
  const auto s = TopologyGraph(spec, 4).summary();
  EXPECT_EQ(s.nvlink_domains, 2);
  EXPECT_EQ(s.switch_chips, 72);
  EXPECT_THROW(TopologyGraph(spec, 3), InputError);
  const TopologyGraph g(spec, 4);
  // Other domain: out through the Grace CPU (C2C, PCIe) to the NIC, not over NVLink.
  const Route r = find_route(g, g.gpu_vertex(0), g.gpu_vertex(72));
  EXPECT_EQ(r.hops[0].kind, LinkKind::c2c);
  EXPECT_EQ(r.hops[2].kind, LinkKind::nic);
}

TEST(Nvl36x2, RackScopeSurvivesTheRoundTrip) {
  const TopologySpec spec = catalog().load("gb200-nvl36x2");
  const std::string text = topology_to_json_text(spec);
  EXPECT_NE(text.find("\"gpu_links_scope\": \"rack\""), std::string::npos);
  const TopologySpec again = topology_from_json_text(text, "round trip");
  EXPECT_EQ(again.nvlink_domain->gpu_links_scope, GpuLinksScope::rack);
  EXPECT_EQ(again.nvlink_domain->inter_rack_latency_us, spec.nvlink_domain->inter_rack_latency_us);
  EXPECT_EQ(topology_to_json_text(catalog().load("gb200-nvl72")).find("gpu_links_scope"), std::string::npos);
}

}  // namespace
}  // namespace racksim
