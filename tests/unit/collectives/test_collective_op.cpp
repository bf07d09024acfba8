#include <gtest/gtest.h>

#include "models/collectives/chunk_layout.hpp"
#include "models/collectives/collective.hpp"
#include "sim/core/errors.hpp"

namespace racksim {
namespace {

TEST(CollectiveOp, NamesRoundTrip) {
  ASSERT_EQ(collective_op_names().size(), 7u);
  for (const auto& name : collective_op_names()) EXPECT_EQ(to_string(collective_op_from_string(name)), name);
  EXPECT_EQ(collective_op_from_string("all_to_all"), CollectiveOp::all_to_all);
}

TEST(CollectiveOp, UnknownOpListsTheValidNames) {
  try {
    collective_op_from_string("allreduce");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--op"), std::string::npos) << what;
    EXPECT_NE(what.find("'allreduce'"), std::string::npos) << what;
    for (const auto& name : collective_op_names()) EXPECT_NE(what.find(name), std::string::npos) << what;
  }
}

// nccl-tests' getBw: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast and
// sendrecv 1.
TEST(CollectiveOp, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_reduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_reduce, 72), 142.0 / 72);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::reduce_scatter, 3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_to_all, 72), 71.0 / 72);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::all_reduce, 1), 0.0);
}

TEST(CollectiveOp, DtypeSizes) {
  EXPECT_EQ(dtype_size_bytes("float"), 4u);
  EXPECT_EQ(dtype_size_bytes("half"), 2u);
  EXPECT_EQ(dtype_size_bytes("bfloat16"), 2u);
  EXPECT_EQ(dtype_size_bytes("double"), 8u);
  EXPECT_EQ(dtype_size_bytes("int8"), 1u);
  EXPECT_EQ(dtype_size_bytes("int32"), 4u);
  EXPECT_EQ(dtype_size_bytes("uint64"), 8u);
  EXPECT_EQ(dtype_size_bytes("f8e4m3"), 1u);
  try {
    dtype_size_bytes("float128");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
  }
}

// Nearly equal integer pieces: 10 bytes in 4 pieces are 3, 3, 2, 2.
TEST(ChunkLayout, PiecesSplitExactly) {
  EXPECT_EQ(piece_bytes(10, 4, 0), 3u);
  EXPECT_EQ(piece_bytes(10, 4, 1), 3u);
  EXPECT_EQ(piece_bytes(10, 4, 2), 2u);
  EXPECT_EQ(piece_bytes(10, 4, 3), 2u);
  EXPECT_EQ(piece_range_bytes(10, 4, 1, 3), 7u);
  EXPECT_EQ(piece_range_bytes(1000003, 72, 0, 72), 1000003u);
  EXPECT_EQ(chunk_size_bytes(CollectiveOp::all_to_all, 10, 4, 16, 4 * 2 + 1), 3u);   // piece (2 -> 1)
  EXPECT_EQ(chunk_owner(CollectiveOp::all_gather, 8, 24, 13), 5);
  EXPECT_EQ(chunk_owner(CollectiveOp::send_recv, 4, 12, 7), 2);
  EXPECT_STREQ(chunk_layout_problem(CollectiveOp::all_to_all, 3, 8), "chunks must be ranks * ranks");
}

}  // namespace
}  // namespace racksim
