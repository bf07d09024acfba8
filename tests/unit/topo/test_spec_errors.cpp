// Bad topology input, one case per rule (topologies/SCHEMA.md, "Validation rules"). Each case starts from
// a small valid document, breaks one thing, and checks that the InputError names where (file or option),
// the JSON pointer and the bad value.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"
#include "sim/topo/topology_spec.hpp"

namespace racksim {
namespace {

using nlohmann::json;

// One x86 host with one GPU on PCIe: the smallest document the loader accepts.
json minimal() {
  return json::parse(R"({
    "schema_version": 1, "id": "mini", "description": "one GPU on PCIe",
    "references": {"spec": "a test fixture"},
    "gpu_types": [{"id": "g", "name": "G", "hbm_capacity_bytes": 85520809984, "hbm_marketed_GB": 80, "hbm_bandwidth_GBps": 3350, "sm_count": 132, "compute_capability": 90,
                   "source": "spec: fixture"}],
    "cpu_types": [{"id": "c", "name": "C", "cores": 8, "isa": "x86_64", "vendor": "intel", "memory_kind": "DDR5", "memory_capacity_GB": 64,
                   "memory_bandwidth_GBps": 100, "source": "spec: fixture"}],
    "link_types": [{"id": "pcie", "kind": "pcie", "bandwidth_GBps": 63, "latency_us": 0.5, "lanes": 16,
                    "source": "spec: fixture"}],
    "tray": {"name": "box", "cpus": [{"id": "cpu0", "type": "c"}], "gpus": [{"id": "gpu0", "type": "g", "cpu": "cpu0"}],
             "links": [{"a": "gpu0", "b": "cpu0", "type": "pcie"}], "source": "spec: fixture"},
    "rack": {"trays": 1, "default_racks": 1, "max_racks": 1, "source": "spec: fixture"}
  })");
}

// The minimal box with 4 GPUs of 18 NVLinks on 4 switch chips (5+4+4+5), like an HGX H100 quarter.
json with_nvlink_domain() {
  json d = minimal();
  d["gpu_types"][0]["nvlink_ports"] = 18;
  d["link_types"].push_back(json::parse(
      R"({"id": "nvl", "kind": "nvlink", "bandwidth_GBps": 25, "latency_us": 0.2, "lanes": 2, "source": "spec: fixture"})"));
  for (int i = 1; i < 4; ++i)
    d["tray"]["gpus"].push_back({{"id", "gpu" + std::to_string(i)}, {"type", "g"}, {"cpu", "cpu0"}});
  d["nvlink_domain"] = json::parse(R"({"racks": 1, "switch_trays": 1, "chips_per_switch_tray": 4, "chip_name": "sw",
      "gpu_links_per_chip": [5, 4, 4, 5], "link_type": "nvl", "switch_latency_us": 0.07,
      "multicast_reduction": true, "source": "spec: fixture"})");
  return d;
}

// Two racks of one tray each whose GPUs reach only their own rack's two chips (the NVL36x2 shape).
json with_rack_scope_domain() {
  json d = with_nvlink_domain();
  d["rack"]["default_racks"] = 2;
  d["rack"]["max_racks"] = 4;
  d["nvlink_domain"]["racks"] = 2;
  d["nvlink_domain"]["switch_trays"] = 2;
  d["nvlink_domain"]["chips_per_switch_tray"] = 2;
  d["nvlink_domain"]["gpu_links_per_chip"] = {9, 9};
  d["nvlink_domain"]["gpu_links_scope"] = "rack";
  d["nvlink_domain"]["inter_rack_latency_us"] = 0.2;
  return d;
}

// The minimal box with a NIC on its GPU and a scale-out fabric whose transport is named (EFA's shape).
json with_transport() {
  json d = minimal();
  d["rack"]["max_racks"] = 4;
  d["nic_types"] = json::parse(R"([{"id": "n", "name": "N", "bandwidth_GBps": 50, "latency_us": 1, "source": "spec: fixture"}])");
  d["tray"]["nics"] = json::parse(R"([{"id": "nic0", "type": "n", "gpu": "gpu0"}])");
  d["tray"]["links"].push_back(json::parse(R"({"a": "gpu0", "b": "nic0", "type": "pcie"})"));
  d["scale_out"] = json::parse(R"({"fabric": "EFA-like", "switch_latency_us": 0.3, "oversubscription": 1,
      "transport": {"name": "T", "net_step_latency_us": 20, "simple_step_overhead_us": 3, "plugin_latency_us": 75,
                    "source": "spec: fixture"},
      "source": "spec: fixture"})");
  return d;
}

TopologySpec load(const json& doc) { return topology_from_json_text(doc.dump(), "test.json"); }

// Runs `f`, which must throw InputError, and checks that its message contains every one of `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "multi-line message: " << msg;
    return;
  }
  ADD_FAILURE() << "no InputError thrown";
}

TEST(SpecErrors, FixturesAreValid) {
  EXPECT_EQ(load(minimal()).tray.gpus.size(), 1u);
  EXPECT_EQ(load(with_nvlink_domain()).nvlink_domain->gpu_links_per_chip.size(), 4u);
  const TopologySpec rack_scope = load(with_rack_scope_domain());
  EXPECT_EQ(rack_scope.nvlink_domain->gpu_links_scope, GpuLinksScope::rack);
  EXPECT_EQ(TopologyGraph(rack_scope, 2).summary().gpus, 8);
}

TEST(SpecErrors, MalformedJson) {
  std::string text = minimal().dump();
  text.resize(text.find("cpu_types") + 3);  // inside a key: the string is never closed
  expect_error([&] { topology_from_json_text(text, "test.json"); },
               {"test.json", "malformed JSON at byte " + std::to_string(text.size() + 1), "missing closing quote"});
}

TEST(SpecErrors, UnknownTopLevelKey) {
  json d = minimal();
  d["colour"] = "red";
  expect_error([&] { load(d); }, {"test.json", "at /colour", "unknown key 'colour'", "schema_version"});
}

TEST(SpecErrors, UnknownNestedKey) {
  json d = minimal();
  d["tray"]["gpus"][0]["clock_MHz"] = 1980;
  expect_error([&] { load(d); }, {"at /tray/gpus/0/clock_MHz", "unknown key 'clock_MHz'", "the keys cpu, id, type"});
}

TEST(SpecErrors, MissingSchemaVersion) {
  json d = minimal();
  d.erase("schema_version");
  expect_error([&] { load(d); }, {"test.json", "at /schema_version", "(missing)", "schema_version 1"});
}

TEST(SpecErrors, WrongSchemaVersion) {
  json d = minimal();
  d["schema_version"] = 2;
  expect_error([&] { load(d); }, {"at /schema_version", "invalid value 2", "[1, 1]"});
}

TEST(SpecErrors, ZeroBandwidth) {
  json d = minimal();
  d["link_types"][0]["bandwidth_GBps"] = 0;
  expect_error([&] { load(d); }, {"at /link_types/0/bandwidth_GBps", "invalid value 0;", "a finite number in"});
}

TEST(SpecErrors, NegativeBandwidth) {
  json d = minimal();
  d["gpu_types"][0]["hbm_bandwidth_GBps"] = -3350.5;
  expect_error([&] { load(d); }, {"at /gpu_types/0/hbm_bandwidth_GBps", "invalid value -3350.5"});
}

TEST(SpecErrors, MissingComputeCapability) {
  json d = minimal();
  d["gpu_types"][0].erase("compute_capability");
  expect_error([&] { load(d); }, {"at /gpu_types/0", "compute_capability"});
}

TEST(SpecErrors, ComputeCapabilityOutOfRange) {
  json d = minimal();
  d["gpu_types"][0]["compute_capability"] = 9;  // 9 is sm_09, not 9.0: the file says x10 (90)
  expect_error([&] { load(d); }, {"at /gpu_types/0/compute_capability", "invalid value 9", "[30, 200]"});
}

TEST(SpecErrors, UnknownCpuIsa) {
  json d = minimal();
  d["cpu_types"][0]["isa"] = "arm64";
  expect_error([&] { load(d); }, {"at /cpu_types/0/isa", "arm64", "aarch64"});
}

TEST(SpecErrors, UnknownCpuVendor) {
  json d = minimal();
  d["cpu_types"][0]["vendor"] = "ibm";
  expect_error([&] { load(d); }, {"at /cpu_types/0/vendor", "ibm", "intel"});
}

TEST(SpecErrors, NanBandwidthIsMalformedJson) {
  std::string text = minimal().dump();
  const std::string good = "\"bandwidth_GBps\":63";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "\"bandwidth_GBps\":NaN");
  expect_error([&] { topology_from_json_text(text, "test.json"); },
               {"test.json", "malformed JSON at byte " + std::to_string(at + good.size() - 1)});
}

TEST(SpecErrors, HugeBandwidthIsOutOfRange) {
  std::string text = minimal().dump();
  const std::string good = "\"bandwidth_GBps\":63";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, good.size(), "\"bandwidth_GBps\":1e400");
  // nlohmann/json refuses a number beyond double range while parsing (out_of_range.406).
  expect_error([&] { topology_from_json_text(text, "test.json"); },
               {"test.json: number out of range", "number overflow parsing '1e400'"});
}

TEST(SpecErrors, DanglingLinkEndpoint) {
  json d = minimal();
  d["tray"]["links"][0]["a"] = "gpu7";
  expect_error([&] { load(d); }, {"at /tray/links/0/a", "'gpu7' (no such tray device)", "cpu0, gpu0"});
}

TEST(SpecErrors, DanglingTypeReference) {
  json d = minimal();
  d["tray"]["gpus"][0]["type"] = "h999";
  expect_error([&] { load(d); }, {"at /tray/gpus/0/type", "'h999' (no such GPU type)", "allowed: g"});
}

TEST(SpecErrors, DanglingNvlinkLinkType) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["link_type"] = "pcie";
  expect_error([&] { load(d); }, {"at /nvlink_domain/link_type", "invalid value 'pcie'", "a link type of kind nvlink"});
}

TEST(SpecErrors, DuplicateTypeId) {
  json d = minimal();
  d["gpu_types"].push_back(d["gpu_types"][0]);
  expect_error([&] { load(d); }, {"at /gpu_types/1/id", "'g' (duplicate id)"});
}

TEST(SpecErrors, DuplicateDeviceId) {
  json d = minimal();
  d["tray"]["gpus"][0]["id"] = "cpu0";
  expect_error([&] { load(d); }, {"at /tray/gpus/0/id", "'cpu0' (duplicate id)"});
}

TEST(SpecErrors, GpuWithNoRouteToTheOthers) {
  json d = minimal();
  d["tray"]["gpus"].push_back({{"id", "gpu1"}, {"type", "g"}, {"cpu", "cpu0"}});
  const TopologySpec spec = load(d);  // valid as a document: the graph finds the island
  expect_error([&] { TopologyGraph(spec, 1); },
               {"mini: at /tray/links", "GPU r0.t0.gpu1 has no route to r0.t0.gpu0"});
}

TEST(SpecErrors, SourceCitingAnUnknownReference) {
  json d = minimal();
  d["gpu_types"][0]["source"] = "spec: 80 GB; wikipedia: 132 SMs";
  expect_error([&] { load(d); }, {"at /gpu_types/0/source", "(reference 'wikipedia')", "/references (spec)"});
}

TEST(SpecErrors, LinksPerChipMustSumToNvlinkPorts) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["gpu_links_per_chip"] = {5, 4, 4, 4};
  expect_error([&] { load(d); },
               {"at /nvlink_domain/gpu_links_per_chip", "invalid value 17 links per GPU", "nvlink_ports (18)"});
}

TEST(SpecErrors, LinksPerChipNeedsOneEntryPerChip) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["gpu_links_per_chip"] = {9, 9};
  expect_error([&] { load(d); }, {"at /nvlink_domain/gpu_links_per_chip", "invalid value 2 entries",
                                  "switch_trays x chips_per_switch_tray = 4"});
}

TEST(SpecErrors, UnknownGpuLinksScope) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["gpu_links_scope"] = "row";
  expect_error([&] { load(d); }, {"at /nvlink_domain/gpu_links_scope", "invalid value \"row\"", "domain, rack"});
}

TEST(SpecErrors, RackScopeNeedsAMultiRackDomain) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["gpu_links_scope"] = "rack";
  expect_error([&] { load(d); }, {"at /nvlink_domain/gpu_links_scope", "'rack' (nvlink_domain.racks is 1)"});
}

TEST(SpecErrors, RackScopeCountsTheChipsOfOneRack) {
  json d = with_rack_scope_domain();
  d["nvlink_domain"]["gpu_links_per_chip"] = {5, 4, 4, 5};
  expect_error([&] { load(d); }, {"at /nvlink_domain/gpu_links_per_chip", "invalid value 4 entries",
                                  "one entry per switch chip of one rack", "= 2)"});
}

TEST(SpecErrors, InterRackLatencyOnlyWithRackScope) {
  json d = with_nvlink_domain();
  d["nvlink_domain"]["inter_rack_latency_us"] = 0.2;
  expect_error([&] { load(d); }, {"at /nvlink_domain/inter_rack_latency_us", "invalid value 0.2",
                                  "only with gpu_links_scope 'rack'"});
}

TEST(SpecErrors, RackScopeRequiresTheTrunkLatency) {
  json d = with_rack_scope_domain();
  d["nvlink_domain"].erase("inter_rack_latency_us");
  expect_error([&] { load(d); }, {"at /nvlink_domain/inter_rack_latency_us", "(missing)"});
}

TEST(SpecErrors, RacksBelowOne) {
  const TopologySpec spec = load(with_nvlink_domain());
  expect_error([&] { TopologyGraph(spec, 0); }, {"--racks", "invalid value 0", "an integer in [1, 1] for mini"});
  expect_error([&] { TopologyGraph(spec, -2); }, {"--racks", "invalid value -2"});
}

TEST(SpecErrors, RacksNotAMultipleOfTheDomainRacks) {
  const TopologySpec spec = load(with_rack_scope_domain());
  expect_error([&] { TopologyGraph(spec, 3); },
               {"--racks", "invalid value 3", "a multiple of 2 for mini", "one NVLink domain spans 2 racks"});
}

TEST(SpecErrors, DefaultRacksNotAMultipleOfTheDomainRacks) {
  json d = with_rack_scope_domain();
  d["rack"]["default_racks"] = 1;
  expect_error([&] { load(d); }, {"at /rack/default_racks", "invalid value 1", "a multiple of nvlink_domain.racks (2)"});
}

TEST(SpecErrors, RackUnitIsRackOrNode) {
  json d = with_rack_scope_domain();
  d["rack"]["unit"] = "pod";
  expect_error([&] { load(d); }, {"at /rack/unit", "invalid value \"pod\"", "one of rack, node"});
}

TEST(SpecErrors, TransportReadsAndWritesBack) {
  const TopologySpec spec = load(with_transport());
  ASSERT_TRUE(spec.scale_out && spec.scale_out->transport);
  const NetTransportSpec& t = *spec.scale_out->transport;
  EXPECT_EQ(t.name, "T");
  EXPECT_EQ(t.net_step_latency_us, 20);
  EXPECT_EQ(t.simple_step_overhead_us, 3);
  EXPECT_EQ(t.plugin_latency_us, 75);
  EXPECT_EQ(describe(t), "T: 20 us a network step (3 more with Simple), 75 us reported to NCCL");
  EXPECT_EQ(topology_from_json_text(topology_to_json_text(spec), "again.json"), spec);
  json d = with_transport();  // the two optional figures default to 0
  d["scale_out"]["transport"].erase("simple_step_overhead_us");
  d["scale_out"]["transport"].erase("plugin_latency_us");
  const TopologySpec bare = load(d);
  EXPECT_EQ(bare.scale_out->transport->simple_step_overhead_us, 0);
  EXPECT_EQ(bare.scale_out->transport->plugin_latency_us, 0);
}

TEST(SpecErrors, TransportWithoutItsStepLatency) {
  json d = with_transport();
  d["scale_out"]["transport"].erase("net_step_latency_us");
  expect_error([&] { load(d); }, {"at /scale_out/transport/net_step_latency_us", "(missing)"});
}

TEST(SpecErrors, TransportNegativeStepLatency) {
  json d = with_transport();
  d["scale_out"]["transport"]["net_step_latency_us"] = -20;
  expect_error([&] { load(d); }, {"at /scale_out/transport/net_step_latency_us", "invalid value -20"});
}

TEST(SpecErrors, TransportNegativeSimpleOverhead) {
  json d = with_transport();
  d["scale_out"]["transport"]["simple_step_overhead_us"] = -3;
  expect_error([&] { load(d); }, {"at /scale_out/transport/simple_step_overhead_us", "invalid value -3"});
}

TEST(SpecErrors, TransportNegativePluginLatency) {
  json d = with_transport();
  d["scale_out"]["transport"]["plugin_latency_us"] = -75;
  expect_error([&] { load(d); }, {"at /scale_out/transport/plugin_latency_us", "invalid value -75"});
}

TEST(SpecErrors, TransportUnknownKey) {
  json d = with_transport();
  d["scale_out"]["transport"]["jitter_us"] = 1;
  expect_error([&] { load(d); }, {"at /scale_out/transport/jitter_us", "unknown key 'jitter_us'"});
}

TEST(SpecErrors, TransportWithoutAName) {
  json d = with_transport();
  d["scale_out"]["transport"].erase("name");
  expect_error([&] { load(d); }, {"at /scale_out/transport/name", "(missing)"});
}

TEST(SpecErrors, TransportSourceMustCiteAReference) {
  json d = with_transport();
  d["scale_out"]["transport"]["source"] = "a blog";
  expect_error([&] { load(d); }, {"at /scale_out/transport/source", "reference 'a'"});
}

TEST(SpecErrors, UnknownSystemNameListsTheValidOnes) {
  const SystemCatalog catalog(RACKSIM_TOPOLOGY_DIR);
  expect_error([&] { catalog.load("gb999-nvl1"); },
               {"system", "invalid value 'gb999-nvl1' (unknown system)", "one of aws-p5, aws-p5en, dgx-spark, gb200-nvl36x2, gb200-nvl72",
                "hgx-h100", "rtx4090-pcie", "or a path to a topology JSON file"});
}

}  // namespace
}  // namespace racksim
