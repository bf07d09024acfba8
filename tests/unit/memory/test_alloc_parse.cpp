// Bad input for `racksim place --alloc`: one rule per test, each error names the option, the bad part
// and what is allowed.
#include <gtest/gtest.h>

#include "models/memory/placement.hpp"
#include "sim/core/errors.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::memory {
namespace {

TrayMemoryModel tray(const std::string& system = "gb200-nvl72", MemoryMode mode = MemoryMode::numa) {
  return TrayMemoryModel(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(system), mode, TuningSettings::untuned(), TrayAssumptions{});
}

// Returns the error message (empty if none was thrown).
std::string error_of(const std::string& text, const TrayMemoryModel& t) {
  try {
    parse_allocation(text, t, "--alloc");
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--alloc");
    return e.what();
  }
  return "";
}

TEST(AllocParse, GoodRequests) {
  const auto t = tray();
  auto r = parse_allocation("prep:cpu:1100GB", t, "--alloc");
  EXPECT_EQ(r.kind, AllocKind::cpu);
  EXPECT_EQ(r.bytes, 1100000000000ULL);
  EXPECT_EQ(r.policy, CpuPolicy::local);
  EXPECT_EQ(t.node(r.toucher).id, "cpu0");  // default: first touch from node 0
  r = parse_allocation("x:cuda:64GiB:gpu2", t, "--alloc");
  EXPECT_EQ(r.bytes, 64ULL << 30);
  EXPECT_EQ(t.node(r.toucher).id, "gpu2");
  r = parse_allocation("y:cpu:1G:interleave=cpu0,cpu1@cpu1", t, "--alloc");
  EXPECT_EQ(r.policy, CpuPolicy::interleave);
  EXPECT_EQ(r.policy_nodes.size(), 2u);
  EXPECT_EQ(t.node(r.toucher).id, "cpu1");
  r = parse_allocation("z:cpu:1G:bind=node3", t, "--alloc");  // NUMA id 3 is gpu1's node
  EXPECT_EQ(t.node(r.policy_nodes.at(0)).id, "gpu1");
  r = parse_allocation("w:cpu:1G:interleave=all", t, "--alloc");
  EXPECT_EQ(r.policy_nodes.size(), 6u);
  r = parse_allocation("m:managed:10GB:gpu3", t, "--alloc");
  EXPECT_EQ(t.node(r.toucher).id, "gpu3");
  r = parse_allocation("e:egm:10GB:cpu1", t, "--alloc");
  EXPECT_EQ(t.node(r.toucher).id, "cpu1");
}

TEST(AllocParse, UnknownKind) {
  const std::string e = error_of("a:gpu:1GB", tray());
  EXPECT_NE(e.find("'gpu'"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu (malloc/mmap), cuda"), std::string::npos) << e;
}

TEST(AllocParse, NegativeSize) {
  const std::string e = error_of("a:cpu:-5GB", tray());
  EXPECT_NE(e.find("'-5GB'"), std::string::npos) << e;
  EXPECT_NE(e.find("negative sizes are not allowed"), std::string::npos) << e;
}

TEST(AllocParse, ZeroAndGarbageSizes) {
  EXPECT_NE(error_of("a:cpu:0GB", tray()).find("> 0 bytes"), std::string::npos);
  EXPECT_NE(error_of("a:cpu:lots", tray()).find("'lots'"), std::string::npos);
}

TEST(AllocParse, NodeThatDoesNotExist) {
  const auto t = tray();
  std::string e = error_of("a:cuda:1GB:gpu4", t);  // a GB200 tray has gpu0..gpu3
  EXPECT_NE(e.find("'gpu4'"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu0, cpu1, gpu0, gpu1, gpu2, gpu3"), std::string::npos) << e;
  e = error_of("a:cpu:1GB:bind=node9", t);
  EXPECT_NE(e.find("'node9'"), std::string::npos) << e;
}

TEST(AllocParse, PolicyTheKindDoesNotTake) {
  const auto t = tray();
  EXPECT_NE(error_of("a:cuda:1GB:bind=gpu0", t).find("cuda takes a GPU"), std::string::npos);
  EXPECT_NE(error_of("a:cuda:1GB:cpu0", t).find("cuda takes a GPU"), std::string::npos);
  EXPECT_NE(error_of("a:cuda:1GB", t).find("cuda needs a GPU"), std::string::npos);
  EXPECT_NE(error_of("a:pinned:1GB:gpu0", t).find("takes a CPU node"), std::string::npos);
  EXPECT_NE(error_of("a:pinned:1GB:interleave=cpu0,cpu1", t).find("not a NUMA policy"), std::string::npos);
  EXPECT_NE(error_of("a:egm:1GB:gpu1", t).find("egm (a host NUMA node) takes a CPU node"), std::string::npos);
  EXPECT_NE(error_of("a:managed:1GB:preferred=gpu0", t).find("not a NUMA policy"), std::string::npos);
  EXPECT_NE(error_of("a:cpu:1GB:gpu0", t).find("use preferred=NODE or bind=NODE"), std::string::npos);
  EXPECT_NE(error_of("a:cpu:1GB:preferred=cpu0,cpu1", t).find("exactly one node"), std::string::npos);
  EXPECT_NE(error_of("a:cpu:1GB:spread=cpu0", t).find("a cpu policy"), std::string::npos);
}

TEST(AllocParse, PcieGpuIsNotANumaNode) {
  const auto t = tray("hgx-h100");
  const std::string e = error_of("a:cpu:1GB:bind=gpu0", t);
  EXPECT_NE(e.find("not one on hgx-h100"), std::string::npos) << e;
}

TEST(AllocParse, SyntaxAndNames) {
  const auto t = tray();
  EXPECT_NE(error_of("a:cpu", t).find("NAME:KIND:SIZE"), std::string::npos);
  EXPECT_NE(error_of("a:cpu:1G:cpu0:extra", t).find("NAME:KIND:SIZE"), std::string::npos);
  EXPECT_NE(error_of("a b:cpu:1G", t).find("a NAME of letters"), std::string::npos);
}

TEST(AllocParse, DuplicateNamesAreRejectedWhenPlacing) {
  const auto t = tray();
  const auto a = parse_allocation("x:cpu:1G", t, "--alloc");
  EXPECT_THROW(place_allocations(t, {a, a}), InputError);
}

TEST(MemoryMode, Parse) {
  EXPECT_EQ(memory_mode_from_string("numa", "--mode"), MemoryMode::numa);
  EXPECT_EQ(memory_mode_from_string("driver", "--mode"), MemoryMode::cdmm);
  try {
    memory_mode_from_string("hmm", "--mode");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--mode: invalid value 'hmm'; allowed: numa or cdmm (driver)");
  }
}

}  // namespace
}  // namespace racksim::memory
