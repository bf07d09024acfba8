// Readers of the committed data: the published-measurement copy and the H200 probe directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "models/calibration/collective_models.hpp"
#include "models/calibration/fitter.hpp"
#include "models/calibration/predictor.hpp"
#include "models/calibration/probe_data.hpp"
#include "models/calibration/public_collectives.hpp"
#include "models/calibration/published_data.hpp"
#include "models/calibration/record_systems.hpp"
#include "sim/core/errors.hpp"

using namespace racksim;
using namespace racksim::calibration;

namespace {
const Measurement* find(const MeasurementSet& s, const std::string& id) {
  for (const auto& m : s.measurements)
    if (m.id == id) return &m;
  return nullptr;
}
const SkippedRecord* find_skipped(const MeasurementSet& s, const std::string& id) {
  for (const auto& m : s.skipped)
    if (m.id == id) return &m;
  return nullptr;
}
}  // namespace

TEST(PublishedData, EveryRecordIsMappedOrSkippedWithAReason) {
  const MeasurementSet s = load_published_measurements(default_published_path());
  EXPECT_EQ(s.measurements.size() + s.skipped.size(), 143u);  // the file's record count
  for (const auto& k : s.skipped) EXPECT_FALSE(k.reason.empty()) << k.id;
  // published#2: Azure ND H100 v5, NVLS all_reduce at 1 KiB, 25.6 us (the table's first point).
  const Measurement* m = find(s, "published#2");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->system, "hgx-h100");
  EXPECT_EQ(m->algorithm, "nvls");
  EXPECT_EQ(m->gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(m->bytes, 1024);
  EXPECT_DOUBLE_EQ(m->time_s, 25.6e-6);
  // published#50: the GB200 tray (4 GPUs of gb200-nvl72), ring.
  const Measurement* g = find(s, "published#50");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->system, "gb200-nvl72");
  EXPECT_EQ(g->gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g->algorithm, "ring");
  // published#0: 2 HGX B200 nodes, busbw only: time = 8 GiB x 2(16-1)/16 / 690.07 GB/s.
  const Measurement* b = find(s, "published#0");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->system, "hgx-b200");
  EXPECT_EQ(b->racks, 2);
  EXPECT_EQ(b->algorithm, "auto");
  EXPECT_TRUE(b->time_derived);
  EXPECT_NEAR(b->time_s, 8589934592.0 * 30 / 16 / 690.07e9, 1e-12);
  // published#74: NVLS off on HGX H100, no size: evaluated at 8 GiB (stated assumption).
  const Measurement* r = find(s, "published#74");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->algorithm, "ring");
  EXPECT_TRUE(r->bytes_assumed);
  EXPECT_DOUBLE_EQ(r->bytes, kAssumedPeakCollectiveBytes);
  // A range "371.02-376.82" becomes its midpoint.
  const Measurement* p2p = find(s, "published#136");
  ASSERT_NE(p2p, nullptr);
  EXPECT_EQ(p2p->kind, MeasurementKind::transfer);
  EXPECT_DOUBLE_EQ(p2p->reported_GBps, (371.02 + 376.82) / 2);
  EXPECT_EQ(p2p->src, "gpu0");
  EXPECT_EQ(p2p->dst, "gpu1");
  // The H800's records map to hgx-h800 (its NVLS run has no size: 8 GiB assumed, as above).
  const Measurement* h800 = find(s, "published#80");
  ASSERT_NE(h800, nullptr);
  EXPECT_EQ(h800->system, "hgx-h800");
  EXPECT_TRUE(h800->bytes_assumed);
  // Records no system expresses are skipped with a reason.
  ASSERT_NE(find_skipped(s, "published#142"), nullptr);  // B200 theoretical HBM peak
  EXPECT_NE(find_skipped(s, "published#142")->reason.find("theoretical"), std::string::npos);
}

TEST(PublishedData, MissingFileAndUnknownKeysAreInputErrors) {
  EXPECT_THROW(load_published_measurements(std::string(RACKSIM_TEST_DATA_DIR) + "/no-such-file.json"), InputError);
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-published-unknown-key.json").string();
  {
    std::ofstream out(path);
    out << R"([{"record_type": "probe", "system": "B200", "probe": "x", "bytes": null, "GBps": 1, "source": "s",
                "notes": "", "derived_fields": [], "confidence": "low", "colour": "red"}])";
  }
  try {
    load_published_measurements(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.json_path(), "/0/colour");
    EXPECT_NE(std::string(e.what()).find("colour"), std::string::npos);
  }
  std::filesystem::remove(path);
}

// Session 45: a record whose size or time is there but is no size or time is skipped with the reason. Before, a
// published record's time of -1 us entered the errors as printed, a size of {} became the assumed 8 GiB and a
// size of -5 wrapped to 2^64 - 5; a public record's node count of {} read as one node and its time of 0 was
// replaced by one derived from its bandwidth. One case per fault, each with the field in its reason.
TEST(PublishedData, ASizeOrTimeThatIsNoSizeOrTimeIsSkippedWithTheReason) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-published-bad-fields.json").string();
  const auto record = [](const std::string& bytes, const std::string& time_us) {
    return R"j({"record_type": "collective", "system": "HGX B200 x2 nodes (CoreWeave b200-8x, IB)", "gpus": 16,
              "collective": "all_reduce", "algo_if_known": "default (not stated)", "bytes": )j" + bytes +
           R"j(, "algbw_GBps": null, "busbw_GBps": 690.07, "time_us": )j" + time_us +
           R"j(, "source": "s", "notes": "", "inplace": null, "derived_fields": [], "nccl_version": null, "confidence": "medium"})j";
  };
  {
    std::ofstream out(path);
    out << "[" << record("8589934592", "-1") << "," << record("{}", "null") << "," << record("-5", "null") << ","
        << record("8589934592", "0") << "," << record("8589934592", "\"fast\"") << "," << record("8589934592", "null") << ","
        << record("\"4G-8G\"", "null") << "," << record("8589934592", "1e308") << ","
        << std::regex_replace(record("8589934592", "null"), std::regex("690\\.07"), "-1") << "]";
  }
  const MeasurementSet s = load_published_measurements(path);
  std::filesystem::remove(path);
  const std::vector<std::pair<std::string, std::string>> skipped = {
      {"published#0", "time -1 us"}, {"published#1", "size {}"}, {"published#2", "size -5"},
      {"published#3", "time 0 us"},  {"published#4", "time \"fast\" us"}, {"published#7", "time 1e+308 us"},
      {"published#8", "busbw -1"}};
  for (const auto& [id, words] : skipped) {
    const SkippedRecord* k = find_skipped(s, id);
    ASSERT_NE(k, nullptr) << id << " was not skipped";
    EXPECT_NE(k->reason.find(words), std::string::npos) << id << ": " << k->reason;
  }
  // A size not given, or given as a description, is still the stated 8 GiB assumption; a good record is read.
  ASSERT_EQ(s.measurements.size(), 2u);
  EXPECT_FALSE(s.measurements[0].bytes_assumed);
  EXPECT_TRUE(s.measurements[1].bytes_assumed);
}

TEST(PublicCollectives, ACountOrTimeThatIsNoCountOrTimeIsSkippedWithTheReason) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-bad-fields.json").string();
  const auto record = [](const std::string& nodes, const std::string& per_node, const std::string& time_us) {
    return R"({"record_type": "collective", "system": "x", "gpus": 16, "nodes": )" + nodes + R"(, "gpus_per_node": )" +
           per_node + R"(, "gpu_model": "H100", "interconnect": "400G InfiniBand, 8 CX-7 per node", "collective": "all_reduce",
             "algo_if_known": "default", "bytes": 1073741824, "algbw_GBps": null, "busbw_GBps": 100, "time_us": )" +
           time_us + R"(, "inplace": null, "nccl_version": null, "source": "s", "notes": "", "confidence": "low"})";
  };
  {
    std::ofstream out(path);
    out << "[" << record("{}", "8", "null") << "," << record("2", "0", "null") << "," << record("2", "8", "0") << ","
        << record("2", "8", "-3.5") << "," << record("2", "8", "null") << "," << record("2", "8", "2e9") << ","
        << std::regex_replace(record("2", "8", "null"), std::regex("\"busbw_GBps\": 100"), "\"busbw_GBps\": -100") << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  const std::vector<std::pair<std::string, std::string>> skipped = {
      {"public#0", "node count {}"}, {"public#1", "GPUs per node 0"}, {"public#2", "time 0 us"}, {"public#3", "time -3.5 us"},
      {"public#5", "time 2000000000.0 us"}, {"public#6", "busbw -100"}};
  for (const auto& [id, words] : skipped) {
    const SkippedRecord* k = find_skipped(s, id);
    ASSERT_NE(k, nullptr) << id << " was not skipped";
    EXPECT_NE(k->reason.find(words), std::string::npos) << id << ": " << k->reason;
  }
  ASSERT_EQ(s.measurements.size(), 1u) << (s.skipped.size() > 4 ? s.skipped[4].reason : "");
  EXPECT_EQ(s.measurements[0].id, "public#4");
}

// What a public record says about how NCCL ran decides the configuration it is predicted on.
// CollNet (IB SHARP) labels, in both record formats: a named CollNet algorithm runs as that algorithm; CollNet
// on without one is NCCL's choice with NCCL_COLLNET_ENABLE=1; CollNet off is not CollNet; a CollNet
// all-gather (the plugin's iallgather) is refused with the reason.
TEST(PublicCollectives, CollnetLabelsRunAsNcclRanThem) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string pub = dir + "/racksim-collnet-public.json", shared = dir + "/racksim-collnet-published.json";
  {
    std::ofstream out(pub);
    auto record = [](const std::string& op, const std::string& algo) {
      return R"({"record_type": "collective", "system": "HGX B200 cluster", "gpus": 32, "nodes": 4,
             "gpus_per_node": 8, "gpu_model": "B200", "interconnect": "NDR 400G InfiniBand, 8x CX-7 per node",
             "collective": ")" + op + R"(", "algo_if_known": ")" + algo + R"(", "bytes": 8589934592, "algbw_GBps": null,
             "busbw_GBps": 540, "time_us": null, "inplace": null, "nccl_version": null, "source": "s", "notes": "",
             "confidence": "high"})";
    };
    out << "[" << record("all_reduce", "NCCL_ALGO=CollnetDirect, NCCL_COLLNET_ENABLE=1") << ","
        << record("all_reduce", "NCCL_ALGO=COLLNETCHAIN, NCCL_COLLNET_ENABLE=1") << ","
        << record("all_reduce", "CollNet with IB SHARP") << ","
        << record("all_reduce", "default; NCCL_COLLNET_ENABLE=0") << ","
        << record("all_gather", "NCCL_ALGO=CollnetDirect, NCCL_COLLNET_ENABLE=1") << "]";
  }
  {
    std::ofstream out(shared);
    out << R"json([{"record_type": "collective", "system": "HGX B200 x4 nodes (some cloud, InfiniBand)", "gpus": 32,
              "collective": "all_reduce", "algo_if_known": "CollNet (SHARP)", "bytes": 8589934592, "algbw_GBps": null,
              "busbw_GBps": 540, "time_us": null, "source": "s", "notes": "", "inplace": null,
              "derived_fields": [], "nccl_version": null, "confidence": "high"}])json";
  }
  const MeasurementSet s = load_public_collectives(pub);
  const MeasurementSet t = load_published_measurements(shared);
  std::filesystem::remove(pub);
  std::filesystem::remove(shared);
  ASSERT_EQ(s.measurements.size(), 4u);
  EXPECT_EQ(s.measurements[0].algorithm, "collnet_direct");
  EXPECT_EQ(s.measurements[1].algorithm, "collnet_chain");
  EXPECT_EQ(s.measurements[2].algorithm, "auto");
  EXPECT_TRUE(s.measurements[2].collnet_enabled);
  EXPECT_FALSE(s.measurements[3].collnet_enabled);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].reason.find("iallgather"), std::string::npos) << s.skipped[0].reason;
  ASSERT_EQ(t.measurements.size(), 1u) << (t.skipped.empty() ? "" : t.skipped[0].reason);
  EXPECT_EQ(t.measurements[0].algorithm, "auto");
  EXPECT_TRUE(t.measurements[0].collnet_enabled);
}

TEST(PublicCollectives, RecordsRunAsTheirSourceSays) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-mapping.json").string();
  {
    std::ofstream out(path);
    auto record = [](const std::string& gpus, const std::string& nodes, const std::string& algo, const std::string& notes) {
      return R"({"record_type": "collective", "system": "x", "gpus": )" + gpus + R"(, "nodes": )" + nodes +
             R"(, "gpus_per_node": 4, "gpu_model": "GB200", "interconnect": "NVL72 trays", "collective": "all_reduce",
             "algo_if_known": ")" + algo + R"(", "bytes": 1073741824, "algbw_GBps": null, "busbw_GBps": 100,
             "time_us": null, "inplace": null, "nccl_version": null, "source": "s", "notes": ")" + notes +
             R"(", "confidence": "low"})";
    };
    out << "[" << record("8", "2", "NCCL_MNNVL_ENABLE=0 (RDMA only)", "pure RDMA") << ","
        << record("16", "4", "NCCL_MNNVL_ENABLE=2", "Cross-domain 2 domains x 2 nodes") << ","
        << record("16", "4", "default", "Underperforming setup per the reporter") << ","
        << record("128", "32", "default", "") << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 3u);
  // MNNVL off: every tray its own NVLink domain, the trays joined by their NICs.
  EXPECT_EQ(s.measurements[0].partitions, "18x1");
  EXPECT_EQ(s.measurements[0].racks, 1);
  // Two NVLink domains of two trays each: 8 GPUs in each of 2 racks.
  EXPECT_EQ(s.measurements[1].partitions, "");
  EXPECT_EQ(s.measurements[1].racks, 2);
  EXPECT_EQ(s.measurements[1].gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 72, 73, 74, 75, 76, 77, 78, 79}));
  // Nothing said: as racksim places ranks, 128 GPUs = 2 racks of 64.
  EXPECT_EQ(s.measurements[2].racks, 2);
  EXPECT_EQ(s.measurements[2].gpus.size(), 128u);
  EXPECT_EQ(s.measurements[2].gpus[64], 72);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_EQ(s.skipped[0].id, "public#2");
  EXPECT_NE(s.skipped[0].reason.find("underperforming"), std::string::npos);
}

// An HGX cluster on InfiniBand or RoCE whose NICs the source leaves unstated is predicted with the system's
// NICs (nics_assumed); an interconnect not stated at all, or not an HGX system, is refused.
TEST(PublicCollectives, UnstatedNicsOnAnHgxFabricAreAssumedOtherwiseRefused) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-unstated.json").string();
  {
    std::ofstream out(path);
    auto record = [](const std::string& model, const std::string& net) {
      return R"({"record_type": "collective", "system": "x", "gpus": 16, "nodes": 2, "gpus_per_node": 8,
             "gpu_model": ")" + model + R"(", "interconnect": ")" + net + R"(", "collective": "all_reduce",
             "algo_if_known": "default", "bytes": 8, "algbw_GBps": null, "busbw_GBps": null, "time_us": 36.5,
             "inplace": null, "nccl_version": null, "source": "s", "notes": "", "confidence": "high"})";
    };
    out << "[" << record("B200", "InfiniBand (NIC count/speed not stated)") << ","
        << record("H100", "RoCE (NCCL_IB_GID_INDEX=3); NIC count/speed not stated") << ","
        << record("H100", "InfiniBand, 8 HCAs per node") << ","
        << record("H100", "not stated in the excerpt read (multi-node H100)") << ","
        << record("GB200", "InfiniBand; NIC count not stated") << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 3u);
  EXPECT_EQ(s.measurements[0].system, "hgx-b200");
  EXPECT_TRUE(s.measurements[0].nics_assumed);
  EXPECT_EQ(s.measurements[0].racks, 2);
  EXPECT_TRUE(s.measurements[1].nics_assumed);
  EXPECT_FALSE(s.measurements[2].nics_assumed);
  ASSERT_EQ(s.skipped.size(), 2u);
  EXPECT_EQ(s.skipped[0].id, "public#3");
  EXPECT_EQ(s.skipped[0].reason, "the interconnect is not stated");
  EXPECT_EQ(s.skipped[1].id, "public#4");
}

// What NCCL runs for a record labelled NVLS: NVLS-tree for an all-reduce across NVLink domains (not across
// hosts of one domain: two GB300 trays of one NVL72 stay NVLS); for an all-gather across domains NCCL's own
// pick (NVLS needs CollNet there). NVL72 trays in domains of their own, joined by RDMA of unstated speed,
// are predicted with the system's NICs; an HGX run of 248 nodes is priced (no fixed node cap, issue 14); AWS
// EFA at the system's own NIC bandwidth per node, and GCP A3 Mega's TCPXO at its own, have ConnectX NICs
// stand in (validation only).
TEST(PublicCollectives, NvlsLabelsMeanWhatNcclRunsAcrossDomains) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-nvls-labels.json").string();
  {
    std::ofstream out(path);
    auto record = [](const std::string& model, int gpus, int nodes, const std::string& net, const std::string& op,
                     const std::string& algo) {
      return R"({"record_type": "collective", "system": "x", "gpus": )" + std::to_string(gpus) + R"(, "nodes": )" +
             std::to_string(nodes) + R"(, "gpus_per_node": )" + std::to_string(gpus / nodes) + R"(, "gpu_model": ")" + model +
             R"(", "interconnect": ")" + net + R"(", "collective": ")" + op + R"(", "algo_if_known": ")" + algo +
             R"(", "bytes": 1073741824, "algbw_GBps": null, "busbw_GBps": 300.0, "time_us": null, "inplace": null,
             "nccl_version": null, "source": "s", "notes": "", "confidence": "high"})";
    };
    out << "[" << record("B200", 32, 4, "8x CX-7 NDR 400G IB", "all_gather", "NCCL_ALGO=NVLS, NCCL_NVLS_ENABLE=1") << ","
        << record("B200", 32, 4, "8x CX-7 NDR 400G IB", "all_reduce", "NCCL_ALGO=NVLS, NCCL_NVLS_ENABLE=1") << ","
        << record("GB300", 8, 2, "NVLink 5 (one NVL72 domain, MNNVL)", "all_reduce", "NVLS (MNNVL/NVLS transport)") << ","
        << record("GB300", 8, 2, "RDMA between NVLink domains (NIC model/speed not stated on the page)", "all_gather", "default")
        << "," << record("H200", 1984, 248, "InfiniBand, 8 IB HCAs per node", "all_reduce", "default") << ","
        << record("H100", 16, 2, "EFA (32 x 100 Gb/s EFA interfaces per p5.48xlarge)", "all_reduce", "default") << ","
        << record("H200", 128, 16, "EFA (p5en: 16 x 200 Gb/s EFAv3 = 3.2 Tb/s per node)", "all_reduce", "default") << ","
        << record("H100", 16, 2, "EFA (1 EFA interface attached per node, 100 Gb/s)", "all_reduce", "default") << ","
        << record("H100", 16, 2, "GPUDirect-TCPXO (A3 Mega, 8 data NICs; TCP-based GPUDirect, not IB/RoCE)", "all_gather",
                  "default")
        << "," << record("H100", 16, 2, "GPUDirect-TCPX (4 data NICs, 1 Tbps per VM)", "all_gather", "default") << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 8u) << (s.skipped.empty() ? "" : s.skipped[0].reason);
  // EFA at 3.2 Tb/s per node on p5 (H100) and p5en (H200, EFAv3): their own systems, whose transport is
  // EFA's (topologies/aws-p5*.json), validation only (no fit touches the plugin's figures); EFA at any other
  // bandwidth is refused.
  EXPECT_EQ(s.measurements[5].system, "aws-p5");
  EXPECT_EQ(s.measurements[6].system, "aws-p5en");
  for (int k : {5, 6}) {
    EXPECT_NE(s.measurements[k].network_stand_in.find("AWS EFA on aws-p5"), std::string::npos);
    EXPECT_NE(s.measurements[k].network_stand_in.find("validation only"), std::string::npos);
    EXPECT_FALSE(is_training_measurement(s.measurements[k], false));
  }
  EXPECT_EQ(s.measurements[6].racks, 16);
  ASSERT_EQ(s.skipped.size(), 2u);
  EXPECT_NE(s.skipped[0].reason.find("AWS EFA"), std::string::npos);
  EXPECT_NE(s.skipped[0].reason.find("3200 Gb/s, stated"), std::string::npos) << s.skipped[0].reason;
  // GCP's TCPXO (A3 Mega): ConnectX NICs at its data NICs' 25 GB/s stand in, validation only; A3 High's
  // TCPX (half its NICs' rate measured) is refused.
  const Measurement& mega = s.measurements[7];
  EXPECT_DOUBLE_EQ(mega.nic_GBps, 25);
  EXPECT_NE(mega.network_stand_in.find("TCPXO"), std::string::npos);
  EXPECT_FALSE(is_training_measurement(mega, false));
  EXPECT_NE(s.skipped[1].reason.find("TCPX"), std::string::npos);
  EXPECT_EQ(s.measurements[0].algorithm, "auto");
  EXPECT_EQ(s.measurements[1].algorithm, "nvls_tree");
  EXPECT_EQ(s.measurements[2].algorithm, "nvls");
  EXPECT_EQ(s.measurements[2].racks, 1);
  EXPECT_EQ(s.measurements[3].system, "gb300-nvl72");
  EXPECT_EQ(s.measurements[3].racks, 2);
  EXPECT_TRUE(s.measurements[3].nics_assumed);
  EXPECT_EQ(s.measurements[3].gpus, (std::vector<int>{0, 1, 2, 3, 72, 73, 74, 75}));
  EXPECT_EQ(s.measurements[4].racks, 248);
  // Every one of them is priced: the analytic model answers for each (the 248-node run in well under a second).
  const Predictor predictor(RACKSIM_TOPOLOGY_DIR, analytic_collective_model(), "analytic");
  for (const Measurement& m : s.measurements) EXPECT_GT(predictor.time_s(m, Calibration::none()), 0) << m.series;
  // The all-gather across two nodes is bound by the NICs: at 25 GB/s instead of the system's 50 it takes
  // close to twice as long.
  Measurement on_ib = mega;
  on_ib.nic_GBps = 0;
  const double ratio = predictor.time_s(mega, Calibration::none()) / predictor.time_s(on_ib, Calibration::none());
  EXPECT_GT(ratio, 1.8);
  EXPECT_LT(ratio, 2.05);
}

// Two Blackwell ranks forced onto Ring/LL128 run at ~0.6 of the LL128 model (NVIDIA/nccl PR #2343): such a
// record is read and predicted but never fitted, with the reason; three ranks, Simple, two Hopper ranks and
// two Blackwell ranks in two nodes are fitted as before.
TEST(PublicCollectives, TwoBlackwellRanksOnLl128AreValidationOnly) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-ll128-2ranks.json").string();
  {
    std::ofstream out(path);
    auto record = [](const std::string& model, int gpus, int nodes, const std::string& algo) {
      return R"({"record_type": "collective", "system": "x", "gpus": )" + std::to_string(gpus) + R"(, "nodes": )" +
             std::to_string(nodes) + R"(, "gpus_per_node": )" + std::to_string(gpus / nodes) + R"(, "gpu_model": ")" + model +
             R"(", "interconnect": "HGX NVSwitch; 8x CX-7 NDR 400G IB", "collective": "all_reduce", "algo_if_known": ")" + algo +
             R"(", "bytes": 1073741824, "algbw_GBps": 383.85, "busbw_GBps": 383.85, "time_us": 2797.3, "inplace": null,
             "nccl_version": "2.31.2", "source": "s", "notes": "", "confidence": "high"})";
    };
    const std::string ll128 = "NCCL_ALGO=Ring, NCCL_PROTO=LL128";
    out << "[" << record("B200", 2, 1, ll128) << "," << record("B200", 3, 1, ll128) << ","
        << record("B200", 2, 1, "NCCL_ALGO=Ring, NCCL_PROTO=Simple") << "," << record("H100", 2, 1, ll128) << ","
        << record("B200", 2, 2, ll128) << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 5u) << (s.skipped.empty() ? "" : s.skipped[0].reason);
  EXPECT_EQ(s.measurements[0].protocol, "LL128");
  EXPECT_EQ(s.measurements[0].algorithm, "ring");
  std::string why;
  EXPECT_FALSE(is_training_measurement(s.measurements[0], false, &why));
  EXPECT_NE(why.find("PR #2343"), std::string::npos) << why;
  for (int k : {1, 2, 3, 4}) {
    EXPECT_TRUE(s.measurements[k].unmodelled_effect.empty()) << k << ": " << s.measurements[k].unmodelled_effect;
    EXPECT_TRUE(is_training_measurement(s.measurements[k], false)) << k;
  }
}

// A machine described in free text (published_measurements.json's `system`): the GPU model, nodes or racks
// and GPUs per node read by rule, what was assumed said in `inferred`.
TEST(RecordSystems, FreeTextMachinesMapByTheRulesOfTheFieldRecords) {
  RecordTarget t = record_target_from_text("HGX H100 x16 nodes (Azure ND H100 v5, IB)", "default", "", 128);
  EXPECT_EQ(t.reason, "");
  EXPECT_EQ(t.system, "hgx-h100");
  EXPECT_EQ(t.racks, 16);
  EXPECT_EQ(t.gpus.size(), 128u);
  EXPECT_FALSE(t.nics_assumed);
  t = record_target_from_text("HGX H200 4 nodes x 4 GPUs, RoCE", "default", "", 16);
  EXPECT_EQ(t.system, "hgx-h200");
  EXPECT_EQ(t.gpus, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27}));
  // No node count: full 8-GPU nodes; no interconnect named across nodes: InfiniBand, the system's NICs assumed.
  t = record_target_from_text("B200 cluster", "default", "", 64);
  EXPECT_EQ(t.system, "hgx-b200");
  EXPECT_EQ(t.racks, 8);
  EXPECT_TRUE(t.nics_assumed);
  EXPECT_NE(t.inferred.find("8 of 8 GPUs assumed"), std::string::npos);
  EXPECT_NE(t.inferred.find("InfiniBand with the system's NICs assumed"), std::string::npos);
  // NVL72: GB200 is not read as B200; racks named, else ranks / 72; MNNVL off: trays apart.
  t = record_target_from_text("GB200 NVL72 x2 racks", "default", "", 128);
  EXPECT_EQ(t.system, "gb200-nvl72");
  EXPECT_EQ(t.racks, 2);
  EXPECT_EQ(t.gpus[64], 72);
  t = record_target_from_text("GB300 NVL72, 18 trays", "default", "", 72);
  EXPECT_EQ(t.system, "gb300-nvl72");
  EXPECT_EQ(t.racks, 1);
  t = record_target_from_text("GB200 trays x2", "NCCL_MNNVL_ENABLE=0", "", 8);
  EXPECT_EQ(t.partitions, "18x1");
  // The export parts have systems of their own.
  EXPECT_EQ(record_target_from_text("HGX H800 8-GPU", "NVLS", "", 8).system, "hgx-h800");
  t = record_target_from_text("HGX H20 x2 nodes, 16 CX-7 NICs (IB NDR)", "NCCL_ALGO=NVLSTree", "", 16);
  EXPECT_EQ(t.system, "hgx-h20");
  EXPECT_EQ(t.racks, 2);
  // An AWS instance type says its GPU and its EFA (aws.amazon.com/ec2/instance-types/p5/, /p6/): p5 and p5en have
  // systems of their own, a p6-b200's 3 200 Gb/s of EFA stand in for an HGX B200's eight 400 Gb/s ConnectX.
  t = record_target_from_text("AWS p5.48xlarge x4", "default", "", 32);
  EXPECT_EQ(t.reason, "");
  EXPECT_EQ(t.system, "aws-p5");
  EXPECT_EQ(t.racks, 4);
  EXPECT_NE(t.network_stand_in.find("AWS EFA on aws-p5"), std::string::npos);
  EXPECT_EQ(record_target_from_text("p5en.48xlarge x2 (EFAv3)", "default", "", 16).system, "aws-p5en");
  t = record_target_from_text("AWS p6-b200.48xlarge, 2 instances", "default", "", 16);
  EXPECT_EQ(t.system, "hgx-b200");
  EXPECT_NE(t.network_stand_in.find("3200 Gb/s per node"), std::string::npos);
  // A node's InfiniBand/RoCE stated unlike the system's: its eight NICs at the stated total's share, validation only.
  t = record_target_from_text("HGX H100 x2 nodes, 4x200 Gb/s RoCE per node", "default", "", 16);
  EXPECT_EQ(t.system, "hgx-h100");
  EXPECT_DOUBLE_EQ(t.nic_GBps, 12.5);
  EXPECT_NE(t.network_stand_in.find("stated at 800 Gb/s"), std::string::npos);
  EXPECT_DOUBLE_EQ(record_target_from_text("HGX H100 x2 nodes, 8 x 400 Gb/s IB", "default", "", 16).nic_GBps, 0);  // as the system
  // GB200 NVL36x2 has a system of its own, its racks in pairs.
  t = record_target_from_text("GB200 NVL36x2", "default", "", 72);
  EXPECT_EQ(t.system, "gb200-nvl36x2");
  EXPECT_EQ(t.racks, 2);
  // PCIe cards and NVLink-bridged NVL cards are not an HGX board: refused, not priced on NVSwitch.
  EXPECT_NE(record_target_from_text("H100 PCIe x8", "default", "", 8).reason.find("PCIe cards"), std::string::npos);
  EXPECT_NE(record_target_from_text("H200 NVL, 4-way bridge", "default", "", 4).reason.find("PCIe cards"), std::string::npos);
  EXPECT_NE(record_target_from_text("8 x B200 without NVLink", "default", "", 8).reason.find("PCIe cards"), std::string::npos);
  EXPECT_EQ(record_target_from_text("Azure ND H100 v5 (H100 SXM 80GB, PCIe Gen5 host)", "default", "", 8).system, "hgx-h100");
  // Refused, each with its reason: EFA whose bandwidth per node is neither stated nor an instance's.
  EXPECT_NE(record_target_from_text("H100 cluster x4 nodes (EFA)", "default", "", 32).reason.find("EFA"), std::string::npos);
  EXPECT_EQ(record_target_from_text("AMD MI300X x2 nodes", "default", "", 16).reason,
            "no racksim system for the MI300X (read from 'AMD MI300X x2 nodes')");
  EXPECT_NE(record_target_from_text("a cluster", "default", "", 16).reason.find("no GPU model"), std::string::npos);
  EXPECT_EQ(canonical_gpu_model("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(canonical_gpu_model("gb200"), "GB200");
  EXPECT_EQ(canonical_gpu_model("B200-SXM"), "B200");
  EXPECT_EQ(canonical_gpu_model("Gaudi 3"), "Gaudi 3");
  // A GB200's GPU is a B200: named beside an NVL72 rack or the superchip, the machine is the rack.
  t = record_target_from_text("NVL72 rack of B200 GPUs, 2 racks", "default", "", 144);
  EXPECT_EQ(t.system, "gb200-nvl72");
  EXPECT_EQ(t.racks, 2);
  EXPECT_EQ(record_target_from_text("B300 NVL72", "default", "", 72).system, "gb300-nvl72");
  EXPECT_EQ(rack_model_of("B200", "Grace Blackwell GB200 NVL72 (Lambda)"), "GB200");
  EXPECT_EQ(rack_model_of("B300", "GB300 NVL72 x4 racks"), "GB300");
  EXPECT_EQ(rack_model_of("B200", "HGX B200 x8 nodes (IB)"), "B200");   // an HGX board stays one
  EXPECT_EQ(rack_model_of("B200", "GB300 NVL72"), "B200");              // a mismatch is not guessed at
  EXPECT_EQ(rack_model_of("H100", "NVL72"), "H100");
}

// A record whose gpu_model is the superchip's GPU ("B200") on an NVL72 machine is priced on the rack, not on
// 4-GPU HGX nodes (GB200's trays hold 4 GPUs: read as HGX B200 x54, a 216-GPU all-reduce came out 2.7x slow).
TEST(PublicCollectives, TheGpuOfAnNvl72IsPricedOnTheRack) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-public-rack-gpu.json").string();
  {
    std::ofstream out(path);
    auto record = [](const std::string& system, const std::string& model, int gpus, int nodes) {
      return R"({"record_type": "collective", "system": ")" + system + R"(", "gpus": )" + std::to_string(gpus) +
             R"(, "nodes": )" + std::to_string(nodes) + R"(, "gpus_per_node": 4, "gpu_model": ")" + model +
             R"(", "interconnect": "MNNVL; InfiniBand across racks", "collective": "all_reduce", "algo_if_known": "default",
             "bytes": 1073741824, "algbw_GBps": null, "busbw_GBps": null, "time_us": 4000,
             "inplace": null, "nccl_version": null, "source": "s", "notes": "", "confidence": "high"})";
    };
    out << "[" << record("GB200 NVL72 x3 racks (a cloud)", "B200", 216, 54) << ","
        << record("Grace Blackwell Ultra GB300 NVL72", "NVIDIA B300", 72, 18) << ","
        << record("HGX B200 x2 (IB)", "B200", 8, 2) << "]";
  }
  const MeasurementSet s = load_public_collectives(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 3u);
  EXPECT_EQ(s.measurements[0].system, "gb200-nvl72");
  EXPECT_EQ(s.measurements[0].racks, 3);
  EXPECT_EQ(s.measurements[1].system, "gb300-nvl72");
  EXPECT_EQ(s.measurements[1].racks, 1);
  EXPECT_EQ(s.measurements[2].system, "hgx-b200");
  EXPECT_EQ(s.measurements[2].racks, 2);
}

TEST(PublishedData, AMachineTheTableDoesNotListIsReadFromItsTextAndNeverFitted) {
  const std::string path = (std::filesystem::temp_directory_path() / "racksim-published-unlisted.json").string();
  {
    std::ofstream out(path);
    out << R"json([{"record_type": "collective", "system": "GB200 NVL72 x2 racks (some cloud)", "gpus": 128,
              "collective": "all_reduce", "algo_if_known": "NVLS", "bytes": 8589934592, "algbw_GBps": null,
              "busbw_GBps": 750, "time_us": null, "source": "s", "notes": "", "inplace": null,
              "derived_fields": [], "nccl_version": null, "confidence": "high"}])json";
  }
  const MeasurementSet s = load_published_measurements(path);
  std::filesystem::remove(path);
  ASSERT_EQ(s.measurements.size(), 1u);
  const Measurement& m = s.measurements[0];
  EXPECT_EQ(m.system, "gb200-nvl72");
  EXPECT_EQ(m.racks, 2);
  EXPECT_EQ(m.algorithm, "nvls_tree");  // NCCL's NVLS across racks
  EXPECT_FALSE(m.placement_known);      // validation only
  EXPECT_NE(m.note.find("machine read from 'GB200 NVL72 x2 racks (some cloud)'"), std::string::npos);
}

TEST(RecordSystems, CollectiveNamesAreReadAsNcclTestsAndNcclsApiSpellThem) {
  // Every spelling a source uses for the same collective: nccl-tests' binaries, NCCL's API, prose.
  const std::vector<std::pair<std::string, CollectiveOp>> spelled{
      {"all_reduce", CollectiveOp::all_reduce},      {"allreduce", CollectiveOp::all_reduce},
      {"All-Reduce", CollectiveOp::all_reduce},      {"AllReduce", CollectiveOp::all_reduce},
      {"ncclAllReduce", CollectiveOp::all_reduce},   {"all_reduce_perf", CollectiveOp::all_reduce},
      {"all gather", CollectiveOp::all_gather},      {"allgather", CollectiveOp::all_gather},
      {"ReduceScatter", CollectiveOp::reduce_scatter}, {"reduce_scatter_perf", CollectiveOp::reduce_scatter},
      {"alltoall", CollectiveOp::all_to_all},        {"All-to-All", CollectiveOp::all_to_all},
      {"broadcast", CollectiveOp::broadcast},        {"bcast", CollectiveOp::broadcast},
      {"sendrecv", CollectiveOp::send_recv},         {"send_recv", CollectiveOp::send_recv},
      {"reduce", CollectiveOp::reduce},              {"reduce_perf", CollectiveOp::reduce}};
  for (const auto& [text, op] : spelled) {
    const auto got = collective_op_spelled(text);
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(*got, op) << text;
  }
  // nccl-tests' other binaries are named as such in the refusal; a word that is no collective says what is.
  for (const std::string text : {"gather", "scatter_perf", "hypercube", "alltoallv", "all_reduces", "perf", ""})
    EXPECT_FALSE(collective_op_spelled(text).has_value()) << text;
  EXPECT_NE(collective_spelling_refusal("scatter_perf").find("nccl-tests' scatter"), std::string::npos);
  EXPECT_NE(collective_spelling_refusal("allreducex").find("all_reduce, all_gather, reduce_scatter"), std::string::npos);
}
TEST(ProbeData, H200DirectoryMapsOntoTheH200PcieSystem) {
  ProbeDirectoryInfo info;
  const MeasurementSet s = load_probe_directory(
      std::string(RACKSIM_TEST_DATA_DIR) + "/../calibrate/data/h200-pcie-1gpu-2026-11-29", &info);
  EXPECT_EQ(info.device, "NVIDIA H200");
  EXPECT_EQ(info.device_count, 1);
  EXPECT_EQ(info.system, "h200-pcie");  // one H200 on PCIe
  EXPECT_DOUBLE_EQ(info.timer_floor_s, 2.336e-6);
  EXPECT_EQ(info.nccl_version, "2.28.9");
  std::map<std::string, int> per_series;
  for (const auto& m : s.measurements) ++per_series[m.series];
  EXPECT_EQ(per_series["h200-pcie-1gpu-2026-11-29 h2d pinned"], 19);  // 4 KiB .. 1 GiB
  EXPECT_EQ(per_series["h200-pcie-1gpu-2026-11-29 d2h pinned"], 19);
  EXPECT_EQ(per_series["h200-pcie-1gpu-2026-11-29 SM hbm read"], 7);  // 64 MiB .. 4 GiB
  // The first pinned H2D copy: 4 KiB in 4.976 us, from cpu0 to gpu0 on the copy engine.
  const Measurement* first = nullptr;
  for (const auto& m : s.measurements)
    if (m.series == "h200-pcie-1gpu-2026-11-29 h2d pinned") {
      first = &m;
      break;
    }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->kind, MeasurementKind::transfer);
  EXPECT_EQ(first->src, "cpu0");
  EXPECT_EQ(first->dst, "gpu0");
  EXPECT_DOUBLE_EQ(first->bytes, 4096);
  EXPECT_DOUBLE_EQ(first->time_s, 4.976e-6);
  EXPECT_EQ(first->confidence, "measured");
  // Pageable copies and the GEMM are listed as skipped series, with reasons.
  int pageable = 0;
  for (const auto& k : s.skipped) pageable += k.what.find("pageable") != std::string::npos;
  EXPECT_EQ(pageable, 2);
  EXPECT_THROW(load_probe_directory("/nonexistent-probe-dir"), InputError);
}

TEST(ProbeData, MultiGpuRunOfIssue7IsReadyToIngest) {
  // The records calibrate/probes/README.md specifies for a 2+ GPU machine (p2p_bandwidth and
  // nccl_sweep_<algo>.jsonl), as the issue-7 run will write them; 8 H200s are taken as an HGX H200.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "racksim-h200-8gpu-test";
  fs::create_directories(dir);
  {
    std::ofstream p2p(dir / "p2p_bandwidth.jsonl");
    p2p << R"({"record":"header","probe":"p2p_bandwidth","device":"NVIDIA H200","device_index":0,"device_count":8})" "\n"
        << R"({"record":"timer","what":"empty cudaEvent pair","time_us":2.0,"iters":45})" "\n"
        << R"({"record":"p2p","src":0,"dst":1,"mode":"unidirectional","peer_access":true,"bytes":268435456,"bytes_per_direction":268435456,"time_us":720.0,"GBps":372.8,"iters":20})" "\n"
        << R"({"record":"p2p","src":0,"dst":1,"mode":"bidirectional","peer_access":true,"bytes":536870912,"bytes_per_direction":268435456,"time_us":730.0,"GBps":735.4,"iters":20})" "\n"
        << R"({"record":"p2p_matrix","mode":"unidirectional","bytes_per_direction":268435456,"GBps":[[null,372.8],[371.9,null]]})" "\n";
    std::ofstream ring(dir / "nccl_sweep_ring.jsonl");
    ring << R"({"record":"header","probe":"nccl_sweep","device":"NVIDIA H200","nccl_version":"2.28.9","world_size":8,"algo":"ring"})" "\n"
         << R"({"record":"check","op":"all_reduce","nranks":8,"ok":true})" "\n"
         << R"({"record":"collective","op":"all_reduce","algo":"ring","nranks":8,"dtype":"float32","bytes":1048576,"count":262144,"time_us":45.1,"time_max_us":46.0,"algbw_GBps":23.25,"busbw_GBps":40.69,"busbw_factor":1.75,"iters":20})" "\n"
         << R"({"record":"collective","op":"all_gather","algo":"ring","nranks":8,"dtype":"float32","bytes":1048576,"count":262144,"time_us":30.0,"time_max_us":31.0,"algbw_GBps":34.95,"busbw_GBps":30.58,"busbw_factor":0.875,"iters":20})" "\n"
         << R"({"record":"end","probe":"nccl_sweep","status":"ok","elapsed_s":210.4})" "\n";
  }
  ProbeDirectoryInfo info;
  const MeasurementSet s = load_probe_directory(dir.string(), &info);
  EXPECT_EQ(info.system, "hgx-h200");
  EXPECT_EQ(info.device_count, 8);
  EXPECT_EQ(info.nccl_version, "2.28.9");
  ASSERT_EQ(s.measurements.size(), 4u);  // 2 collectives (files sorted: nccl_sweep_ring first), 2 p2p
  const Measurement& ar = s.measurements[0];
  EXPECT_EQ(ar.kind, MeasurementKind::collective);
  EXPECT_EQ(ar.op, CollectiveOp::all_reduce);
  EXPECT_EQ(ar.algorithm, "ring");
  EXPECT_EQ(ar.gpus.size(), 8u);
  EXPECT_DOUBLE_EQ(ar.time_s, 45.1e-6);
  EXPECT_EQ(s.measurements[1].op, CollectiveOp::all_gather);
  const Measurement& uni = s.measurements[2];
  EXPECT_EQ(uni.kind, MeasurementKind::transfer);
  EXPECT_EQ(uni.src, "gpu0");
  EXPECT_EQ(uni.dst, "gpu1");
  EXPECT_DOUBLE_EQ(uni.bytes, 268435456);
  EXPECT_DOUBLE_EQ(uni.timer_floor_s, 2e-6);
  EXPECT_EQ(s.measurements[3].engine, "copy both ways");  // bidirectional: bytes per direction, same time model
  EXPECT_DOUBLE_EQ(s.measurements[3].bytes, 268435456);
  // A machine that is not an HGX H200 is named explicitly: DIR=SYSTEM.
  EXPECT_EQ(load_probe_directory(dir.string() + "=h200-pcie", &info).measurements.size(), 4u);
  EXPECT_EQ(info.system, "h200-pcie");
  fs::remove_all(dir);
}

// The system a probe run is guessed onto, by the GPU's name: the longer names first, and a PCIe or NVL card (other
// clocks, power and HBM than the SXM module of its name) refused unless the system is named.
TEST(ProbeData, TheGuessedSystemIsTheSxmModuleOrAnError) {
  EXPECT_EQ(guess_probe_system("NVIDIA H100 80GB HBM3", 1, "f"), "hgx-h100");
  EXPECT_EQ(guess_probe_system("NVIDIA H200", 1, "f"), "h200-pcie");
  EXPECT_EQ(guess_probe_system("NVIDIA H200", 2, "f"), "hgx-h200");
  EXPECT_EQ(guess_probe_system("NVIDIA GB200", 4, "f"), "gb200-nvl72");
  for (const std::string device : {"NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA A10"}) {
    try {
      guess_probe_system(device, 1, "dir/copy_bandwidth.jsonl");
      ADD_FAILURE() << "guessed a system for '" << device << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--probes DIR=SYSTEM"), std::string::npos) << e.what();
    }
  }
}

// Session 45: a probe record's size, time or rate below zero (or a time of 0, a fractional rank count) was read
// and gave a negative or infinite bandwidth. Each is an InputError naming the file, its line and the key; one
// case per field.
TEST(ProbeData, ANegativeSizeTimeOrRateIsAnErrorNamingItsLineAndKey) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "racksim-probe-bad-values";
  const std::string header = R"({"record":"header","probe":"nccl_sweep","device":"NVIDIA H200","world_size":8})";
  const auto collective = [](const std::string& field, const std::string& value) {
    std::string r = R"({"record":"collective","op":"all_reduce","algo":"ring","nranks":8,"bytes":1048576,"time_us":45.1,"busbw_GBps":40.69})";
    return std::regex_replace(r, std::regex("\"" + field + "\":[^,}]+"), "\"" + field + "\":" + value);
  };
  const auto p2p = [](const std::string& field, const std::string& value) {
    std::string r = R"({"record":"p2p","src":0,"dst":1,"mode":"unidirectional","bytes":268435456,"time_us":720.0,"GBps":372.8})";
    return std::regex_replace(r, std::regex("\"" + field + "\":[^,}]+"), "\"" + field + "\":" + value);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {collective("bytes", "-1"), "/bytes"},         {collective("time_us", "0"), "/time_us"},
      {collective("time_us", "-0.5"), "/time_us"},   {collective("busbw_GBps", "-3"), "/busbw_GBps"},
      {collective("nranks", "7.5"), "/nranks"},      {collective("nranks", "0"), "/nranks"},
      {p2p("src", "-1"), "/src"},                    {p2p("bytes", "-268435456"), "/bytes"},
      {p2p("GBps", "-1"), "/GBps"}};
  for (const auto& [line, key] : cases) {
    fs::create_directories(dir);
    std::ofstream(dir / "probe.jsonl") << header << "\n" << line << "\n";
    try {
      load_probe_directory(dir.string());
      ADD_FAILURE() << line << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("probe.jsonl:2"), std::string::npos) << e.what();
      EXPECT_EQ(e.json_path(), key) << e.what();
    }
    fs::remove_all(dir);
  }
  // The same records with good values are read; a busbw of 0 (nccl-tests' smallest sizes) too.
  fs::create_directories(dir);
  std::ofstream(dir / "probe.jsonl") << header << "\n" << collective("busbw_GBps", "0") << "\n" << p2p("src", "0") << "\n";
  EXPECT_EQ(load_probe_directory(dir.string()).measurements.size(), 2u);
  fs::remove_all(dir);
}

// One GPU (nccl_sweep.py under torchrun --nproc-per-node 1): NCCL's one-rank path. A call in place launches
// nothing (its time is the events' alone, 0 on a CUDA graph) and racksim prices the out-of-place call, so those
// records are listed as skipped with the reason, before their time is read; the out-of-place ones are 1-GPU
// collectives on the lent machine's system. "in_place" other than a boolean is an error naming the line.
TEST(ProbeData, OneRankInPlaceRecordsAreSkippedOutOfPlaceOnesRead) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "racksim-h200-onerank-test";
  fs::create_directories(dir);
  const std::string header =
      R"({"record":"header","probe":"nccl_sweep","device":"NVIDIA H200","nccl_version":"2.28.9","world_size":1,"algo":"default"})";
  const std::string in_place =
      R"({"record":"collective","op":"all_reduce","algo":"default","nranks":1,"bytes":1073741824,"time_us":0.0,"busbw_GBps":0.0,"in_place":true})";
  const std::string out_of_place =
      R"({"record":"collective","op":"all_gather","algo":"default","nranks":1,"bytes":1073741824,"time_us":510.2,"busbw_GBps":0.0,"in_place":false})";
  std::ofstream(dir / "nccl_sweep_default.jsonl") << header << "\n" << in_place << "\n" << out_of_place << "\n";
  ProbeDirectoryInfo info;
  const MeasurementSet s = load_probe_directory(dir.string(), &info);
  EXPECT_EQ(info.system, "h200-pcie");
  ASSERT_EQ(s.measurements.size(), 1u);
  EXPECT_EQ(s.measurements[0].op, CollectiveOp::all_gather);
  EXPECT_EQ(s.measurements[0].gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(s.measurements[0].time_s, 510.2e-6);
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].what.find("all_reduce"), std::string::npos) << s.skipped[0].what;
  EXPECT_NE(s.skipped[0].reason.find("launches nothing"), std::string::npos) << s.skipped[0].reason;
  std::ofstream(dir / "nccl_sweep_default.jsonl") << header << "\n" << std::regex_replace(in_place, std::regex("true"), "\"yes\"") << "\n";
  try {
    load_probe_directory(dir.string());
    ADD_FAILURE() << "in_place \"yes\" was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl_sweep_default.jsonl:2"), std::string::npos) << e.what();
    EXPECT_EQ(e.json_path(), "/in_place") << e.what();
  }
  fs::remove_all(dir);
}

TEST(ProbeData, AllToAllIsReadAsDirectWhateverNcclAlgoSays) {
  // NCCL's all_to_all is point-to-point (NCCL_ALGO has no effect), so the ring run's all_to_all records
  // (issue 7, calibrate/data/h200-nvswitch-2gpu-2026-11-29) are racksim's 'direct' algorithm.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "racksim-h200-a2a-test";
  fs::create_directories(dir);
  {
    std::ofstream ring(dir / "nccl_sweep_ring.jsonl");
    ring << R"({"record":"header","probe":"nccl_sweep","device":"NVIDIA H200","nccl_version":"2.28.9","world_size":2,"algo":"ring"})" "\n"
         << R"({"record":"collective","op":"all_to_all","algo":"ring","nranks":2,"dtype":"float32","bytes":8589934592,"count":2147483648,"time_us":12752.64,"time_max_us":12753.9,"algbw_GBps":673.58,"busbw_GBps":336.79,"busbw_factor":0.5,"iters":5})" "\n"
         << R"({"record":"collective","op":"all_reduce","algo":"ring","nranks":2,"dtype":"float32","bytes":8589934592,"count":2147483648,"time_us":24555.83,"time_max_us":24556.8,"algbw_GBps":349.81,"busbw_GBps":349.81,"busbw_factor":1.0,"iters":5})" "\n";
  }
  const MeasurementSet s = load_probe_directory(dir.string());
  ASSERT_EQ(s.measurements.size(), 2u);
  EXPECT_EQ(s.measurements[0].op, CollectiveOp::all_to_all);
  EXPECT_EQ(s.measurements[0].algorithm, "direct");
  EXPECT_EQ(s.measurements[1].algorithm, "ring");  // other ops keep the run's NCCL_ALGO
  fs::remove_all(dir);
}
