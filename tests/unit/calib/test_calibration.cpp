// Calibration files: strict schema v1, every entry with its source; "none" and "default"; lookups; and
// the engine applying link efficiencies, extra latency and per-algorithm overheads.
#include <gtest/gtest.h>

#include "../engine/engine_test_support.hpp"
#include "../engine/hand_schedules.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/engine/simulation.hpp"

namespace racksim {
namespace {

const char* kValid = R"({
  "schema_version": 1, "name": "lab", "source": "probes on the lab machine",
  "links": {"nvlink": {"bandwidth_efficiency": 0.8, "extra_latency_us": 0.1, "source": "p2p probe"}},
  "algorithms": {
    "*/ring": {"launch_overhead_us": 5, "step_overhead_us": 1, "bandwidth_efficiency": 0.5, "source": "fit"},
    "all_reduce/ring": {"launch_overhead_us": 6, "source": "fit"}
  }
})";

std::string error_of(const std::string& text) {
  try {
    calibration_from_json_text(text, "cal.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Calibration, NoneIsVendorPeak) {
  const Calibration c = load_calibration("none");
  EXPECT_EQ(c.name, "none");
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nvlink).bandwidth_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(c.algorithm("all_reduce/nvls").step_overhead_us, 0.0);
}

TEST(Calibration, ShippedDefaultLoadsWithASourceOnEveryEntry) {
  const Calibration c = load_calibration("default");
  EXPECT_EQ(c.name.rfind("default", 0), 0u) << c.name;
  EXPECT_FALSE(c.source.empty());
  for (const auto& [kind, l] : c.links) {
    EXPECT_GT(l.bandwidth_efficiency, 0.0) << to_string(kind);
    EXPECT_LE(l.bandwidth_efficiency, 1.0) << to_string(kind);
    EXPECT_FALSE(l.source.empty()) << to_string(kind);
  }
  for (const auto& [key, a] : c.algorithms) {
    EXPECT_GT(a.bandwidth_efficiency, 0.0) << key;
    EXPECT_LE(a.bandwidth_efficiency, 1.0) << key;
    EXPECT_FALSE(a.source.empty()) << key;
  }
}

TEST(Calibration, ParsesLooksUpAndRoundTrips) {
  const Calibration c = calibration_from_json_text(kValid, "cal.json");
  EXPECT_EQ(c.name, "lab");
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nvlink).bandwidth_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nic).bandwidth_efficiency, 1.0);  // missing kind: identity
  EXPECT_DOUBLE_EQ(c.algorithm("all_reduce/ring").launch_overhead_us, 6);  // exact key wins
  EXPECT_DOUBLE_EQ(c.algorithm("all_gather/ring").launch_overhead_us, 5);  // else "*/ring"
  EXPECT_DOUBLE_EQ(c.algorithm("all_gather/ring").efficiency_at(1e9), 0.5);
  EXPECT_DOUBLE_EQ(c.algorithm("all_reduce/nvls").launch_overhead_us, 0);  // else identity
  const Calibration back = calibration_from_json_text(calibration_to_json_text(c), "again");
  EXPECT_EQ(calibration_to_json_text(back), calibration_to_json_text(c));
}

// An engine request carries a calibration or topology file as it was read while the value is unchanged,
// and serialises it once it differs (engine_server.hpp): both texts read back to the same value.
TEST(Calibration, RequestTextIsTheFileWhileUnchangedElseSerialised) {
  const std::string path = std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/default.json";
  const std::string file = read_json_file_text(path);
  Calibration c = load_calibration(path);
  EXPECT_EQ(calibration_json_text_of(c), file);
  EXPECT_TRUE(calibration_from_json_text(file, "again") == c);
  c.links[LinkKind::nvlink].bandwidth_efficiency *= 0.5;
  EXPECT_EQ(calibration_json_text_of(c), calibration_to_json_text(c));
  EXPECT_TRUE(calibration_from_json_text(calibration_json_text_of(c), "again") == c);

  const std::string topology = std::string(RACKSIM_TOPOLOGY_DIR) + "/gb200-nvl72.json";
  TopologySpec spec = load_topology_file(topology);
  EXPECT_EQ(topology_json_text_of(spec), read_json_file_text(topology));
  spec.nic_types.at(0).bandwidth_GBps *= 2;  // what --nic-GBps 100 does (the file says 50)
  EXPECT_EQ(topology_json_text_of(spec), topology_to_json_text(spec));
  EXPECT_TRUE(topology_from_json_text(topology_json_text_of(spec), "again") == spec);
}

// Entries per GPU architecture (NCCL's own constants differ per architecture, tuning.cc:134-198): the
// architecture's entry wins, then the architecture-independent one, then another architecture's, which
// the lookup reports as borrowed so that results can say so.
TEST(Calibration, PerArchitectureEntriesAndBorrowing) {
  const Calibration c = calibration_from_json_text(R"({"schema_version": 2, "name": "a", "source": "s",
    "links": {"nvlink": {"bandwidth_efficiency": 0.9, "source": "s"},
              "hopper:nvlink": {"bandwidth_efficiency": 0.8, "source": "s"},
              "blackwell:nic": {"bandwidth_efficiency": 0.7, "source": "s"}},
    "algorithms": {"hopper:all_reduce/nvls": {"bandwidth_efficiency": 0.6, "source": "s"},
                   "*/ring": {"bandwidth_efficiency": 0.5, "source": "s"}}})", "arch.json");
  std::string borrowed;
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nvlink, "hopper", &borrowed).bandwidth_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nvlink, "blackwell", &borrowed).bandwidth_efficiency, 0.9);
  EXPECT_TRUE(borrowed.empty());
  EXPECT_DOUBLE_EQ(c.link(LinkKind::nic, "hopper", &borrowed).bandwidth_efficiency, 0.7);
  EXPECT_EQ(borrowed, "blackwell");
  borrowed.clear();
  EXPECT_DOUBLE_EQ(c.algorithm("all_reduce/nvls", "blackwell", &borrowed).bandwidth_efficiency, 0.6);
  EXPECT_EQ(borrowed, "hopper");
  borrowed.clear();
  EXPECT_DOUBLE_EQ(c.algorithm("all_reduce/ring", "blackwell", &borrowed).bandwidth_efficiency, 0.5);
  EXPECT_TRUE(borrowed.empty());
  const Calibration back = calibration_from_json_text(calibration_to_json_text(c), "again");
  EXPECT_EQ(calibration_to_json_text(back), calibration_to_json_text(c));
  EXPECT_NE(error_of(R"({"schema_version": 2, "name": "x", "source": "s", "links": {"turing:nvlink": {"source": "s"}}})")
                .find("hopper"),
            std::string::npos);
}

TEST(Calibration, StrictErrorsNameTheFileAndPointer) {
  const std::string base = R"({"schema_version": 1, "name": "x", "source": "s")";
  EXPECT_NE(error_of(base + R"(, "colour": 1})").find("colour"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 3, "name": "x", "source": "s"})").find("/schema_version"), std::string::npos);
  const std::string eff = error_of(base + R"(, "links": {"nvlink": {"bandwidth_efficiency": 1.2, "source": "s"}}})");
  EXPECT_NE(eff.find("cal.json"), std::string::npos) << eff;
  EXPECT_NE(eff.find("/links/nvlink/bandwidth_efficiency"), std::string::npos) << eff;
  EXPECT_NE(error_of(base + R"(, "links": {"warp": {"source": "s"}}})").find("nvlink, c2c"), std::string::npos);
  EXPECT_NE(error_of(base + R"(, "links": {"nic": {"bandwidth_efficiency": 0.9}}})").find("source"), std::string::npos);
  EXPECT_NE(error_of(base + R"(, "algorithms": {"ring": {"source": "s"}}})").find("op/algorithm"), std::string::npos);
  EXPECT_NE(error_of(base + R"(, "algorithms": {"*/ring": {"step_overhead_us": -1, "source": "s"}}})").find("step_overhead_us"),
            std::string::npos);
  // One case per rate the fit writes: a negative p2p pipeline rate or queue-pair rate is refused by name.
  const std::string qp = error_of(base + R"(, "algorithms": {"hopper:all_reduce/nvls_tree": {"qp_line_fraction": -0.4, "source": "s"}}})");
  EXPECT_NE(qp.find("/algorithms/hopper:all_reduce/nvls_tree/qp_line_fraction"), std::string::npos) << qp;
  EXPECT_NE(error_of(base + R"(, "algorithms": {"all_to_all/direct": {"p2p_pipeline_GBps": -70, "source": "s"}}})").find("p2p_pipeline_GBps"),
            std::string::npos);
  const std::string per_gpu = error_of(base + R"(, "algorithms": {"blackwell:all_reduce/nvls": {"launch_us_per_8_gpus": -1.6, "source": "s"}}})");
  EXPECT_NE(per_gpu.find("/algorithms/blackwell:all_reduce/nvls/launch_us_per_8_gpus"), std::string::npos) << per_gpu;
  const std::string copy = error_of(base + R"(, "algorithms": {"hopper:all_gather/ring": {"ring_copy_GBps": -1500, "source": "s"}}})");
  EXPECT_NE(copy.find("/algorithms/hopper:all_gather/ring/ring_copy_GBps"), std::string::npos) << copy;
  const std::string from = error_of(base + R"(, "algorithms": {"hopper:all_reduce/tree": {"borrowed_from": "turing", "source": "s"}}})");
  EXPECT_NE(from.find("/algorithms/hopper:all_reduce/tree/borrowed_from"), std::string::npos) << from;
  EXPECT_NE(from.find("blackwell"), std::string::npos) << from;  // the architectures allowed are listed
  // Session 33: the launch across domains became per 8 GPUs of each domain; a file with the old per-call key
  // would be read 8x off on a rack, so it is refused naming the new key.
  const std::string old_key =
      error_of(base + R"(, "algorithms": {"blackwell:all_reduce/nvls_tree": {"scale_out_launch_overhead_us": 80.8, "source": "s"}}})");
  EXPECT_NE(old_key.find("/algorithms/blackwell:all_reduce/nvls_tree/scale_out_launch_overhead_us"), std::string::npos) << old_key;
  EXPECT_NE(old_key.find("scale_out_launch_us_per_8_gpus"), std::string::npos) << old_key;
  EXPECT_THROW(load_calibration("/nonexistent/cal.json"), InputError);
}


// Session 45: a calibration value of 1e308 was read without complaint, and the closed form and the engine then
// disagreed by 287 orders of magnitude (a ramp of 1e308 bytes: 5.9e302 us against 5.2e15 us). Every value
// has an upper bound now, as the topology's have: one case per parameter, each refused by its JSON pointer
// with the allowed range, and the largest allowed value still read.
TEST(Calibration, AbsurdlyLargeValuesAreRefusedByName) {
  const std::string base = R"({"schema_version": 2, "name": "x", "source": "s")";
  struct Case {
    const char* section;
    const char* entry;
    const char* key;
    const char* too_large;
    const char* largest;
    const char* range;
  };
  const Case cases[] = {
      {"links", "nvlink", "extra_latency_us", "1000001", "1e6", "[0, 1e+06]"},
      {"algorithms", "all_reduce/ring", "launch_overhead_us", "1e308", "1e6", "[0, 1e+06]"},
      {"algorithms", "blackwell:all_reduce/nvls", "launch_us_per_8_gpus", "2e6", "1e6", "[0, 1e+06]"},
      {"algorithms", "hopper:all_reduce/ring", "scale_out_launch_us_per_8_gpus", "1e7", "1e6", "[0, 1e+06]"},
      {"algorithms", "hopper:all_reduce/tree", "scale_out_hop_overhead_us", "1e9", "1e6", "[0, 1e+06]"},
      {"algorithms", "*/ring", "step_overhead_us", "1e308", "1e6", "[0, 1e+06]"},
      {"algorithms", "all_reduce/ring", "half_efficiency_bytes", "1e308", "1099511627776", "[0, 1.09951e+12]"},
      {"algorithms", "all_reduce/nvls", "ramp_bytes_per_gpu", "2e12", "1099511627776", "[0, 1.09951e+12]"},
      {"algorithms", "all_to_all/direct", "p2p_pipeline_GBps", "1e7", "1e6", "[0, 1e+06]"},
      {"algorithms", "hopper:all_reduce/nvls_tree", "qp_line_fraction", "1.5", "1", "[0, 1]"},
      {"algorithms", "hopper:all_gather/ring", "ring_copy_GBps", "1e300", "1e6", "[0, 1e+06]"},
  };
  for (const Case& c : cases) {
    const auto entry = [&](const char* value) {
      return base + ", \"" + c.section + "\": {\"" + c.entry + "\": {\"" + c.key + "\": " + value + ", \"source\": \"s\"}}}";
    };
    const std::string e = error_of(entry(c.too_large));
    const std::string pointer = std::string("/") + c.section + "/" + c.entry + "/" + c.key;
    EXPECT_NE(e.find(pointer), std::string::npos) << c.key << ": " << e;
    EXPECT_NE(e.find(c.range), std::string::npos) << c.key << ": " << e;
    EXPECT_EQ(error_of(entry(c.largest)), "") << c.key;
  }
}
// Issue 16: "all_reduce/rign" loaded with exit 0 and silently calibrated nothing.
TEST(Calibration, UnknownAlgorithmOrLinkKindIsAnErrorWithASuggestion) {
  const std::string base = R"({"schema_version": 1, "name": "x", "source": "s")";
  const std::string rign = error_of(base + R"(, "algorithms": {"all_reduce/rign": {"source": "s"}}})");
  EXPECT_NE(rign.find("/algorithms/all_reduce/rign"), std::string::npos) << rign;
  EXPECT_NE(rign.find("did you mean 'all_reduce/ring'"), std::string::npos) << rign;
  EXPECT_NE(rign.find("*/nvls"), std::string::npos) << rign;  // the valid keys are listed
  EXPECT_NE(error_of(base + R"(, "algorithms": {"*/rnig": {"source": "s"}}})").find("did you mean '*/ring'"), std::string::npos);
  // An algorithm that exists, but not for that op.
  EXPECT_NE(error_of(base + R"(, "algorithms": {"all_gather/tree": {"source": "s"}}})").find("no such algorithm"),
            std::string::npos);
  const std::string kind = error_of(base + R"(, "links": {"nvlnk": {"source": "s"}}})");
  EXPECT_NE(kind.find("did you mean 'nvlink'"), std::string::npos) << kind;
  // Every key of the shipped calibration is a registry algorithm.
  EXPECT_NO_THROW(load_calibration("default"));
}

// Protocol entries ("protocols": LL128's rate through a NIC, per architecture): the architecture's entry, else
// the architecture-independent one, else identity -- never another architecture's (NCCL's protocol model
// stands where an architecture has no data). One error per invalid value, naming it and what is allowed.
TEST(Calibration, ProtocolEntriesLookUpWithoutBorrowingAndRefuseBadValues) {
  const Calibration c = calibration_from_json_text(R"({"schema_version": 2, "name": "p", "source": "s",
    "protocols": {"blackwell:LL128": {"network_efficiency": 0.75, "source": "fit"},
                  "LL": {"network_efficiency": 0.9, "source": "by hand"}}})", "proto.json");
  EXPECT_DOUBLE_EQ(c.protocol("LL128", "blackwell").network_efficiency, 0.75);
  EXPECT_DOUBLE_EQ(c.protocol("LL128", "hopper").network_efficiency, 1.0);  // not borrowed from blackwell
  EXPECT_DOUBLE_EQ(c.protocol("LL", "hopper").network_efficiency, 0.9);     // the architecture-independent one
  EXPECT_DOUBLE_EQ(c.protocol("Simple", "blackwell").network_efficiency, 1.0);
  const Calibration back = calibration_from_json_text(calibration_to_json_text(c), "again");
  EXPECT_TRUE(back == c);
  // A calibration without protocol entries writes no "protocols" key.
  EXPECT_EQ(calibration_to_json_text(Calibration::none()).find("protocols"), std::string::npos);

  const std::string base = R"({"schema_version": 2, "name": "x", "source": "s", "protocols": )";
  const std::string name = error_of(base + R"({"blackwell:LL129": {"source": "s"}}})");
  EXPECT_NE(name.find("/protocols/blackwell:LL129"), std::string::npos) << name;
  EXPECT_NE(name.find("did you mean 'LL128'"), std::string::npos) << name;
  const std::string zero = error_of(base + R"({"LL128": {"network_efficiency": 0, "source": "s"}}})");
  EXPECT_NE(zero.find("/protocols/LL128/network_efficiency"), std::string::npos) << zero;
  const std::string above = error_of(base + R"({"LL128": {"network_efficiency": 1.5, "source": "s"}}})");
  EXPECT_NE(above.find("/protocols/LL128/network_efficiency"), std::string::npos) << above;
  EXPECT_NE(error_of(base + R"({"LL128": {"network_efficiency": 0.8}}})").find("source"), std::string::npos);
  EXPECT_NE(error_of(base + R"({"LL128": {"efficiency": 0.8, "source": "s"}}})").find("efficiency"), std::string::npos);
  EXPECT_NE(error_of(base + R"({"volta2:LL128": {"source": "s"}}})").find("hopper"), std::string::npos);
}

// Device memory ("memory": {"hbm"}): what a collective on one rank copies through. Missing: identity (the
// topology's HBM bandwidth, no latency); it round-trips, and a file without it writes no "memory" key. One
// error per invalid value, naming it and what is allowed.
TEST(Calibration, MemoryEntryLooksUpRoundTripsAndRefusesBadValues) {
  const Calibration c = calibration_from_json_text(R"({"schema_version": 2, "name": "m", "source": "s",
    "memory": {"hbm": {"bandwidth_efficiency": 0.92, "extra_latency_us": 4.7, "source": "D2D copy probe"}}})", "mem.json");
  EXPECT_DOUBLE_EQ(c.hbm().bandwidth_efficiency, 0.92);
  EXPECT_DOUBLE_EQ(c.hbm().extra_latency_us, 4.7);
  EXPECT_EQ(c.hbm().source, "D2D copy probe");
  EXPECT_DOUBLE_EQ(Calibration::none().hbm().bandwidth_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(Calibration::none().hbm().extra_latency_us, 0.0);
  EXPECT_TRUE(calibration_from_json_text(calibration_to_json_text(c), "again") == c);
  EXPECT_EQ(calibration_to_json_text(Calibration::none()).find("memory"), std::string::npos);
  // The shipped calibration has the probes' fit, below the HBM's vendor peak.
  const LinkCalibration& shipped = load_calibration("default").hbm();
  EXPECT_GT(shipped.fit.points, 0);
  EXPECT_GT(shipped.bandwidth_efficiency, 0.8);
  EXPECT_LT(shipped.bandwidth_efficiency, 1.0);

  const std::string base = R"({"schema_version": 2, "name": "x", "source": "s", "memory": )";
  const std::string name = error_of(base + R"({"hmb": {"source": "s"}}})");
  EXPECT_NE(name.find("/memory/hmb"), std::string::npos) << name;
  EXPECT_NE(name.find("did you mean 'hbm'"), std::string::npos) << name;
  const std::string zero = error_of(base + R"({"hbm": {"bandwidth_efficiency": 0, "source": "s"}}})");
  EXPECT_NE(zero.find("/memory/hbm/bandwidth_efficiency"), std::string::npos) << zero;
  const std::string above = error_of(base + R"({"hbm": {"bandwidth_efficiency": 1.2, "source": "s"}}})");
  EXPECT_NE(above.find("/memory/hbm/bandwidth_efficiency"), std::string::npos) << above;
  const std::string negative = error_of(base + R"({"hbm": {"extra_latency_us": -1, "source": "s"}}})");
  EXPECT_NE(negative.find("/memory/hbm/extra_latency_us"), std::string::npos) << negative;
  EXPECT_NE(error_of(base + R"({"hbm": {"bandwidth_efficiency": 0.9}}})").find("source"), std::string::npos);
  EXPECT_NE(error_of(base + R"({"hbm": {"latency_us": 4, "source": "s"}}})").find("latency_us"), std::string::npos);
  EXPECT_NE(error_of(base + R"([1]})").find("/memory"), std::string::npos);
}

TEST(Calibration, AMissingFileNamesTheOption) {
  try {
    load_calibration("/nonexistent/cal.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--calibration");
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cal.json"), std::string::npos) << e.what();
  }
}

TEST(Calibration, TheEngineAppliesEveryParameter) {
  const auto g = test::load_graph("gb200-nvl72", 1);
  const auto nv = test::nvlink_numbers(g);
  const Calibration c = calibration_from_json_text(kValid, "cal.json");
  const std::uint64_t S = 1ull << 30;
  const Simulation sim(g, c);
  Schedule s = test::hand_ring_all_reduce(test::gpu_range(0, 8), S);
  const RunResult r = sim.run(s);
  EXPECT_EQ(r.calibration, "lab");
  // "all_reduce/ring" has its own entry: launch 6 us, no step overhead, full algorithm efficiency; then 14
  // steps of route latency + 2 NVLink hops x 0.1 us and S/8 at 0.8 of the port bandwidth.
  const double piece = static_cast<double>(S / 8);
  const double exact = 6e-6 + 14 * (nv.alpha + 0.2e-6 + piece / (0.8 * nv.B));
  EXPECT_NEAR(r.time_s, exact, 1e-9 * exact);
  // Another op's ring takes "*/ring": launch 5 us, 1 us before every step, efficiency 0.5 on top of 0.8.
  s.algorithm = "broadcast/ring";
  const double star = 5e-6 + 14 * (1e-6 + nv.alpha + 0.2e-6 + piece / (0.8 * 0.5 * nv.B));
  EXPECT_NEAR(sim.run(s).time_s, star, 1e-9 * star);
}

}  // namespace
}  // namespace racksim
