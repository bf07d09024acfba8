// Topology files in the parsed-file cache (sim/topo/topology_cache.hpp, sim/core/parsed_file_cache.hpp): every
// shipped system comes back field for field from its binary form (between them they set every optional part:
// an NVLink domain or none, a rack-scoped one, a network transport, an integrated GPU), bytes cut short or
// trailing are refused, and an entry is used only for its own text and kind. Each directory test works in a
// private directory of its own (XDG_RUNTIME_DIR).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/parsed_file_cache.hpp"
#include "sim/topo/topology_cache.hpp"
#include "../core/private_runtime_dir_support.hpp"
#include "../core/wire_damage_support.hpp"

namespace racksim {
namespace {

std::vector<std::filesystem::path> shipped_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(RACKSIM_TOPOLOGY_DIR))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TopologyCache, EveryShippedSystemComesBackWhole) {
  const auto files = shipped_files();
  ASSERT_GE(files.size(), 10u);
  bool transport = false, rack_scope = false, no_domain = false, integrated = false;
  for (const auto& f : files) {
    const TopologySpec spec = topology_from_json_text(read_json_file_text(f.string()), f.string());
    EXPECT_EQ(decode_topology(encode_topology(spec)), spec) << f;
    transport |= spec.scale_out && spec.scale_out->transport.has_value();
    rack_scope |= spec.nvlink_domain && spec.nvlink_domain->gpu_links_scope == GpuLinksScope::rack;
    no_domain |= !spec.nvlink_domain;
    for (const auto& g : spec.gpu_types) integrated |= g.integrated;
  }
  // What the claim above rests on: the shipped files set each optional part somewhere.
  EXPECT_TRUE(transport);
  EXPECT_TRUE(rack_scope);
  EXPECT_TRUE(no_domain);
  EXPECT_TRUE(integrated);
}

TEST(TopologyCache, BytesCutShortOrTrailingAreRefused) {
  const std::string text = read_json_file_text(std::string(RACKSIM_TOPOLOGY_DIR) + "/gb200-nvl72.json");
  const std::string bytes = encode_topology(topology_from_json_text(text, "gb200-nvl72.json"));
  EXPECT_THROW(decode_topology(bytes.substr(0, bytes.size() - 1)), SimulationError);
  EXPECT_THROW(decode_topology(bytes.substr(0, 16)), SimulationError);
  EXPECT_THROW(decode_topology(bytes + "x"), SimulationError);
  EXPECT_THROW(decode_topology(""), SimulationError);
}

// Whatever bytes an entry holds, decoding refuses them or gives a topology, never reads past them: every
// prefix of a real encoding is refused, and 2 000 single-byte changes (a fixed seed) are refused or decode to
// a value that comes back whole from its own encoding.
TEST(TopologyCache, DamagedBytesAreRefusedNeverOverread) {
  const std::string text = read_json_file_text(std::string(RACKSIM_TOPOLOGY_DIR) + "/aws-p5.json");
  const std::string bytes = encode_topology(topology_from_json_text(text, "aws-p5.json"));
  const int decoded = test::expect_damage_refused_or_whole(
      bytes, [](const auto& v) { return encode_topology(v); }, [](const std::string& b) { return decode_topology(b); }, 1);
  EXPECT_GT(decoded, 0);
}

class TopologyCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = runtime_.path();
    // A text no other test of this process reads.
    text_ = read_json_file_text(std::string(RACKSIM_TOPOLOGY_DIR) + "/hgx-h100.json");
    text_.insert(text_.find('{') + 1, "\n  ");
    file_ = dir_ + "/system.json";
    std::ofstream(file_) << text_;
  }
  test::ScopedPrivateRuntimeDir runtime_;
  std::string dir_, text_, file_;
};

TEST_F(TopologyCacheDir, ALoadLeavesTheParseForTheNextProcess) {
  EXPECT_FALSE(cached_topology(text_));
  const TopologySpec loaded = load_topology_file(file_);
  const std::optional<TopologySpec> cached = cached_topology(text_);
  ASSERT_TRUE(cached);
  EXPECT_EQ(*cached, loaded);
  EXPECT_EQ(*cached, topology_from_json_text(text_, "elsewhere.json"));  // the path names it only in errors
}

TEST_F(TopologyCacheDir, AnEntryOfAnotherKindOrTextIsNotUsed) {
  const TopologySpec spec = topology_from_json_text(text_, "system.json");
  // An entry of another kind for this text (bytes that would decode as this topology), put where the
  // topology's would be: refused by its kind.
  cache_parse("calibration", text_, encode_topology(spec));
  std::filesystem::copy_file(parsed_cache_path("calibration", text_), topology_cache_path(text_));
  EXPECT_FALSE(cached_topology(text_));
  // An entry for another text under this one's name (a hash collision): refused by the text.
  cache_topology(text_ + " ", spec);
  std::filesystem::copy_file(topology_cache_path(text_ + " "), topology_cache_path(text_),
                             std::filesystem::copy_options::overwrite_existing);
  EXPECT_FALSE(cached_topology(text_));
  ASSERT_TRUE(cached_topology(text_ + " "));
  // Its own entry, with bytes that do not decode: parsed instead.
  cache_parse("topology", text_, "garbage");
  EXPECT_FALSE(cached_topology(text_));
  cache_topology(text_, spec);
  EXPECT_EQ(cached_topology(text_), spec);
}

}  // namespace
}  // namespace racksim
