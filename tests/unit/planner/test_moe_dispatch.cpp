// What one MoE dispatch (or combine) moves per GPU, by dispatcher (CommCost::moe_dispatch_s): Megatron's
// alltoall dispatcher one copy per (token, expert) pair; DeepEP and HybridEP one per (token, rank reached),
// and across NVLink domains one per (token, domain reached). A cost that is the bytes themselves makes the
// time the volume, so each case is a closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/planner/comm_cost.hpp"

namespace racksim {
namespace {

// Time = bytes per rank (one second per byte): moe_dispatch_s then returns the volume it priced.
class BytesCost : public CommCost {
 public:
  std::string name() const override { return "bytes"; }

 protected:
  Answer evaluate(const CollectiveRequest& r) override { return {static_cast<double>(r.bytes), "bytes", 0}; }
};

std::vector<int> range(int first, int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = first + i;
  return v;
}

// n (1 - (1 - 1/n)^k): the ranks (or domains) a token with k experts spread evenly over n of them reaches.
double reached(double n, int k) { return n * (1 - std::pow(1 - 1 / n, k)); }

constexpr double kTokenBytes = 1 << 20;  // one GPU's tokens, each counted once

TEST(MoeDispatch, AlltoallSendsEveryTokenExpertPair) {
  BytesCost c;
  const int g = c.group(range(0, 8));
  const double bytes = 8 * kTokenBytes;  // top 8
  EXPECT_DOUBLE_EQ(c.moe_dispatch_s(MoeDispatcher::alltoall, g, -1, -1, bytes, kTokenBytes, 8), bytes);
}

TEST(MoeDispatch, DeepEpAndHybridEpSendATokenOncePerRankInsideADomain) {
  BytesCost c;
  const int g = c.group(range(0, 8));
  const double bytes = 8 * kTokenBytes;
  // top 8 over EP 8: 8 (1 - (7/8)^8) = 5.25 ranks a token, not 8 copies
  const double want = std::ceil(kTokenBytes * reached(8, 8));
  EXPECT_NEAR(reached(8, 8), 5.2511, 1e-4);
  for (MoeDispatcher d : {MoeDispatcher::deepep, MoeDispatcher::hybridep})
    EXPECT_DOUBLE_EQ(c.moe_dispatch_s(d, g, -1, -1, bytes, kTokenBytes, 8), want) << to_string(d);
  // top 1: nothing to share, the same bytes as alltoall
  EXPECT_DOUBLE_EQ(c.moe_dispatch_s(MoeDispatcher::deepep, g, -1, -1, kTokenBytes, kTokenBytes, 1), kTokenBytes);
}

TEST(MoeDispatch, AcrossDomainsOncePerDomainOnTheNicsOncePerRankOnNvlink) {
  BytesCost c;
  // EP 16 over 2 domains of 8: inner = the first domain's 8, outer = one GPU per domain
  const int g = c.group(range(0, 16)), inner = c.group(range(0, 8)), outer = c.group({0, 8});
  const double bytes = 8 * kTokenBytes;
  // alltoall: the whole buffer through the NICs' all-to-all, its 1/D share inside the domain
  EXPECT_DOUBLE_EQ(c.moe_dispatch_s(MoeDispatcher::alltoall, g, inner, outer, bytes, kTokenBytes, 8), bytes);
  // DeepEP: 2 (1 - 1/2^8) domains a token across, 16 (1 - (15/16)^8) ranks a token over NVLink: the larger binds
  const double across = kTokenBytes * reached(2, 8), within = kTokenBytes * reached(16, 8);
  ASSERT_GT(within, across);
  EXPECT_DOUBLE_EQ(c.moe_dispatch_s(MoeDispatcher::deepep, g, inner, outer, bytes, kTokenBytes, 8), std::ceil(within));
}

}  // namespace
}  // namespace racksim
