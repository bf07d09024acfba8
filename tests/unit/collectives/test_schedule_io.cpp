#include <gtest/gtest.h>

#include "collective_test_support.hpp"
#include "models/analytic/cost_model.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/schedule_check.hpp"
#include "models/collectives/schedule_io.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

bool same(const Schedule& a, const Schedule& b) {
  if (a.algorithm != b.algorithm || a.chunks != b.chunks || a.phases != b.phases || a.note != b.note) return false;
  const auto &p = a.request, &q = b.request;
  if (p.op != q.op || p.algorithm != q.algorithm || p.gpus != q.gpus || p.bytes != q.bytes || p.dtype != q.dtype ||
      p.chunk_bytes != q.chunk_bytes || p.root != q.root || p.inner_algorithm != q.inner_algorithm ||
      p.outer_algorithm != q.outer_algorithm)
    return false;
  if (a.tasks.size() != b.tasks.size()) return false;
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    const Task &x = a.tasks[i], &y = b.tasks[i];
    if (x.id != y.id || !(x.src == y.src) || x.dsts != y.dsts || x.bytes != y.bytes || x.chunk != y.chunk ||
        x.chunk_count != y.chunk_count || x.reduce != y.reduce || x.deps != y.deps || x.phase != y.phase)
      return false;
  }
  return true;
}

TEST(ScheduleIo, RoundTripIsExactAndCanonical) {
  const auto g = test::shipped("gb200-nvl72", 2);
  CollectiveRequest r = test::make_request(CollectiveOp::all_reduce, "hierarchical", test::first_gpus(144), 1000003);
  r.outer_algorithm = "tree";
  const Schedule s = build_schedule(r, g);
  const std::string text = schedule_to_json_text(s);
  const Schedule back = schedule_from_json_text(text, "dump.json");
  EXPECT_TRUE(same(s, back));
  EXPECT_EQ(schedule_to_json_text(back), text);  // byte-identical
  EXPECT_TRUE(check_schedule(back).empty());
  EXPECT_NE(text.find("\"src\":\"switch:0\""), std::string::npos);  // NVLS inner: tasks to the switch plane
}

TEST(ScheduleIo, NvlsMulticastAndEmptySchedule) {
  const auto g = test::shipped("hgx-h100");
  const Schedule s = build_schedule(test::make_request(CollectiveOp::all_gather, "nvls", test::first_gpus(8), 4096), g);
  EXPECT_TRUE(same(s, schedule_from_json_text(schedule_to_json_text(s), "x")));
  const Schedule one = build_schedule(test::make_request(CollectiveOp::all_reduce, "ring", {3}, 4096), g);
  EXPECT_TRUE(one.tasks.empty());
  EXPECT_TRUE(same(one, schedule_from_json_text(schedule_to_json_text(one), "x")));
}

std::string schedule_error_of(const std::string& text) {
  try {
    schedule_from_json_text(text, "bad.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ScheduleIo, StrictReading) {
  const auto g = test::shipped("gb200-nvl72");
  const Schedule s = build_schedule(test::make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(3), 300), g);
  const std::string text = schedule_to_json_text(s);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(schedule_error_of(replaced("\"schema_version\": 1", "\"schema_version\": 2")).find("/schema_version"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"chunks\": 3", "\"chunks\": 3, \"colour\": 1")).find("colour"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"deps\":[0,1]", "\"deps\":[5,1]")).find("/tasks/4/deps/0"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"src\":\"rank:0\"", "\"src\":\"rank:9\"")).find("rank:9"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"src\":\"rank:0\"", "\"src\":\"gpu:0\"")).find("switch:<domain>"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"id\":1,", "\"id\":7,")).find("/tasks/1/id"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"algorithm\": \"all_reduce/ring\"", "\"algorithm\": \"all_gather/ring\"")).find("op"),
            std::string::npos);
  EXPECT_NE(schedule_error_of("{").find("bad.json"), std::string::npos);
  // A lowered pipeline: fewer pieces than NCCL's chunks, both whole numbers, nothing else in it.
  const std::string lowered = "\"chunks\": 3, \"lowered_pipeline\": {";
  EXPECT_EQ(schedule_error_of(replaced("\"chunks\": 3", lowered + "\"pieces\": 2, \"nccl_chunks\": 9}")), "");
  EXPECT_NE(schedule_error_of(replaced("\"chunks\": 3", lowered + "\"pieces\": 9, \"nccl_chunks\": 9}")).find("/lowered_pipeline/pieces"),
            std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"chunks\": 3", lowered + "\"pieces\": 2}")).find("nccl_chunks"), std::string::npos);
  EXPECT_NE(schedule_error_of(replaced("\"chunks\": 3", lowered + "\"pieces\": 2, \"nccl_chunks\": 9, \"x\": 1}")).find("x"),
            std::string::npos);
}

// The builder's depth lowered below NCCL's chunks (choose_depth's DepthChoice::nccl_chunks) travels with the
// schedule, through a dump and back, where note_coarse_pipeline reads it; an unlowered schedule has none.
TEST(ScheduleIo, LoweredPipelineTravelsWithTheSchedule) {
  const auto g = test::shipped("hgx-h100");
  const CollectiveRequest r = test::make_request(CollectiveOp::all_reduce, "ring", test::first_gpus(8), 1 << 20);
  const Schedule plain = build_schedule(r, g);
  EXPECT_EQ(plain.nccl_chunks, 0);
  EXPECT_EQ(schedule_to_json_text(plain).find("lowered_pipeline"), std::string::npos);
  ScheduleBuilder b(r, "all_reduce/ring", 1);
  DepthChoice d;
  d.depth = 21, d.model_depth = 1024, d.nccl_chunks = 1024, d.note = "chunk_bytes 524288: depth 21 (lowered from 1024 ...)";
  note_depth(b, d);
  const Schedule s = b.finish();
  EXPECT_EQ(s.pipeline_pieces, 21);
  EXPECT_EQ(s.nccl_chunks, 1024);
  EXPECT_EQ(s.note, d.note);
  const Schedule back = schedule_from_json_text(schedule_to_json_text(s), "dump.json");
  EXPECT_EQ(back.pipeline_pieces, 21);
  EXPECT_EQ(back.nccl_chunks, 1024);
}

}  // namespace
}  // namespace racksim
