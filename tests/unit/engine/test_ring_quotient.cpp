// NCCL's rail rings across racks listed as their own quotient (models/collectives/building_blocks.hpp:
// rail_ring_symmetry, ring_quotient_schedule; sim/engine/symmetric_run.hpp): the listed tasks must be the full
// schedule's orbits (coverage, bytes and dependencies checked against the full builder's schedule, task for
// task), the engine must give the full run's results, and a run that breaks the symmetry must get the full
// schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine_test_support.hpp"
#include "models/collectives/building_blocks.hpp"
#include "models/collectives/registry.hpp"
#include "sim/calib/calibration.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/engine/symmetric_run.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim {
namespace {

CollectiveRequest ring_request(CollectiveOp op, int gpus, std::uint64_t bytes) {
  CollectiveRequest r;
  r.op = op;
  r.gpus = test::gpu_range(0, gpus);
  r.bytes = bytes;
  r.algorithm = "ring";
  return r;
}

struct Case {
  std::string system;
  int racks = 1;
  int gpus = 0;
  CollectiveOp op = CollectiveOp::all_reduce;
  std::uint64_t bytes = 0;
  long group = 0;  // elements of the symmetry found
};

std::string name(const Case& c) {
  return c.system + " x" + std::to_string(c.racks) + " " + to_string(c.op) + " " + std::to_string(c.bytes) + " B";
}

// The listed tasks are the full schedule's orbits: the images of the listed tasks under the group are the full
// schedule's tasks (src, dst and phase as a multiset), the orbits' mean bytes add up to every phase's bytes, and each
// listed task is its listed ring's task at its place in the full schedule, with the same chunk and the dependencies
// of that task, each named by its orbit.
TEST(RingQuotient, ListsTheFullSchedulesOrbitsTaskForTask) {
  const std::vector<Case> cases = {
      {"gb200-nvl72", 2, 144, CollectiveOp::all_reduce, 1ull << 26, 16},
      {"gb200-nvl72", 2, 144, CollectiveOp::all_gather, 1ull << 26, 16},
      {"gb200-nvl72", 2, 144, CollectiveOp::reduce_scatter, 1ull << 26, 16},
      {"gb300-nvl72", 2, 144, CollectiveOp::all_reduce, 1ull << 24, 16},
      // HGX nodes of 8 GPUs on 8 rails: every node turn is kept (period one node); pipelined pieces at 1 MiB.
      {"hgx-h100", 4, 32, CollectiveOp::all_reduce, 1ull << 20, 32},
      {"hgx-h100", 8, 64, CollectiveOp::all_gather, 1ull << 22, 64},
      {"hgx-b200", 4, 32, CollectiveOp::reduce_scatter, 1ull << 24, 32},
      // Sizes that do not divide into the pieces: the orbits' mean bytes.
      {"gb200-nvl72", 2, 144, CollectiveOp::all_reduce, 1000000, 16},
      {"hgx-h100", 4, 32, CollectiveOp::all_gather, 1000003, 32},
      {"hgx-h100", 4, 32, CollectiveOp::reduce_scatter, 999999, 32},
      // An odd node count: GB200's even rings onto each other and odd ones onto each other (two listed rings);
      // HGX's rings all onto each other.
      {"gb200-nvl72", 3, 216, CollectiveOp::all_reduce, 1ull << 26, 8},
      {"gb200-nvl72", 3, 216, CollectiveOp::all_gather, 1000000, 8},
      {"hgx-h100", 3, 24, CollectiveOp::all_reduce, 1ull << 20, 8},
      // Inside one NVLink domain: one ring in request order and its n turns (period one rank).
      {"gb200-nvl72", 1, 72, CollectiveOp::all_reduce, 1ull << 26, 72},
      {"gb300-nvl72", 1, 36, CollectiveOp::reduce_scatter, 1ull << 24, 36},
      {"hgx-h100", 1, 8, CollectiveOp::all_gather, 1000003, 8},
      {"hgx-b200", 1, 5, CollectiveOp::all_reduce, 1ull << 20, 5},
  };
  for (const Case& c : cases) {
    const TopologyGraph g = test::load_graph(c.system, c.racks);
    const CollectiveRequest r = ring_request(c.op, c.gpus, c.bytes);
    const Schedule full = build_schedule(r, g);
    const Schedule listed = build_schedule_quotient(r, g, Calibration::none());
    ASSERT_TRUE(listed.symmetry) << name(c);
    const auto& maps = listed.symmetry->rank_maps;
    EXPECT_EQ(static_cast<long>(maps.size()), c.group) << name(c);
    ASSERT_EQ(static_cast<long>(full.tasks.size()), listed.symmetry->full_tasks) << name(c);
    ASSERT_EQ(listed.tasks.size() * maps.size(), full.tasks.size()) << name(c);
    EXPECT_EQ(listed.phases, full.phases) << name(c);
    EXPECT_EQ(listed.chunks, full.chunks) << name(c);
    EXPECT_EQ(listed.note, full.note) << name(c);

    // Coverage: the images of the listed tasks are the full schedule's tasks.
    using Key = std::tuple<int, int, int>;  // src rank, dst rank, phase
    std::map<Key, int> want, got;
    for (const Task& t : full.tasks) ++want[{t.src.index, t.dsts.at(0).index, t.phase}];
    for (const auto& map : maps)
      for (const Task& t : listed.tasks) ++got[{map[t.src.index], map[t.dsts.at(0).index], t.phase}];
    EXPECT_TRUE(want == got) << name(c) << ": the images are not the full schedule's tasks";
    // The orbits' mean bytes: with the group's size, every phase's bytes of the full schedule.
    const auto& mean = listed.symmetry->mean_bytes;
    ASSERT_TRUE(mean.empty() || mean.size() == listed.tasks.size()) << name(c);
    std::vector<double> full_bytes(full.phases.size(), 0.0), listed_bytes(full.phases.size(), 0.0);
    for (const Task& t : full.tasks) full_bytes[static_cast<std::size_t>(t.phase)] += static_cast<double>(t.bytes);
    for (std::size_t t = 0; t < listed.tasks.size(); ++t)
      listed_bytes[static_cast<std::size_t>(listed.tasks[t].phase)] +=
          (mean.empty() ? static_cast<double>(listed.tasks[t].bytes) : mean[t]) * static_cast<double>(maps.size());
    for (std::size_t p = 0; p < full_bytes.size(); ++p)
      EXPECT_NEAR(listed_bytes[p], full_bytes[p], 1e-9 * full_bytes[p]) << name(c) << " phase " << p;
    EXPECT_EQ(mean.empty(), c.bytes % static_cast<std::uint64_t>(full.chunks) == 0) << name(c);

    // Task for task against the full schedule (its rings one after the other, each in the listed order by half,
    // step, position and piece): each listed ring's tasks at positions below its period have the same transfer,
    // chunk and bytes, and dependencies that name the same orbits (same ring, position mod the period).
    const int n = c.gpus;
    const auto orders = nccl_ring_orders(r, g);
    const auto symmetry = rail_ring_symmetry(r, g, orders);
    ASSERT_TRUE(symmetry) << name(c);
    const long halves = static_cast<long>(full.phases.size());
    const long rings = static_cast<long>(orders.size());
    const long ring_half = static_cast<long>(full.tasks.size()) / halves / rings;
    const long pieces = ring_half / (static_cast<long>(n - 1) * n);
    ASSERT_EQ(ring_half, static_cast<long>(n - 1) * n * pieces) << name(c);
    std::map<long, std::pair<long, long>> listed_ring;  // ring -> (its first listed task, its period)
    long next = 0;
    for (std::size_t a = 0; a < symmetry->listed_rings.size(); ++a) {
      listed_ring[symmetry->listed_rings[a]] = {next, symmetry->periods[a]};
      next += halves * (n - 1) * symmetry->periods[a] * pieces;
    }
    ASSERT_EQ(next, static_cast<long>(listed.tasks.size())) << name(c);
    const auto full_id = [&](long ring, long h, long step, long i, long k) {
      return (ring * halves + h) * ring_half + (step * n + i) * pieces + k;
    };
    const auto listed_id = [&](long ring, long h, long step, long i, long k) {
      const auto [first, period] = listed_ring.at(ring);
      return first + h * (n - 1) * period * pieces + (step * period + i % period) * pieces + k;
    };
    // A full task id of a listed ring -> the listed id of its orbit.
    const auto orbit_of = [&](long id) {
      const long ring = id / (halves * ring_half), h = id / ring_half % halves, rest = id % ring_half;
      const long step = rest / (n * pieces), i = rest / pieces % n, k = rest % pieces;
      return listed_id(ring, h, step, i, k);
    };
    int mismatches = 0;
    for (const auto& [ring, at] : listed_ring)
      for (long h = 0; h < halves; ++h)
        for (long step = 0; step < n - 1; ++step)
          for (long i = 0; i < at.second; ++i)
            for (long k = 0; k < pieces; ++k) {
              const Task& f = full.tasks.at(static_cast<std::size_t>(full_id(ring, h, step, i, k)));
              const Task& l = listed.tasks.at(static_cast<std::size_t>(listed_id(ring, h, step, i, k)));
              std::vector<int> deps;
              for (int d : f.deps) deps.push_back(static_cast<int>(orbit_of(d)));
              std::sort(deps.begin(), deps.end());
              if (f.src != l.src || f.dsts != l.dsts || f.chunk != l.chunk || f.bytes != l.bytes ||
                  f.reduce != l.reduce || f.phase != l.phase || deps != l.deps)
                ++mismatches;
            }
    EXPECT_EQ(mismatches, 0) << name(c);
  }
}

// Where 71 GPUs a rack (or racks of 72 and 71 GPUs) put the rings' rails out of step, there is no quotient: the builder
// gives the full schedule.
TEST(RingQuotient, NoneWhereTheRingsHaveNoSymmetry) {
  const struct {
    std::string system;
    int racks, gpus;
  } cases[] = {{"gb200-nvl72", 2, 142}, {"gb200-nvl72", 2, 143}};  // 71 + 71; 72 + 71
  for (const auto& c : cases) {
    const TopologyGraph g = test::load_graph(c.system, c.racks);
    const Schedule s = build_schedule_quotient(ring_request(CollectiveOp::all_reduce, c.gpus, 1ull << 24), g,
                                               Calibration::none());
    EXPECT_FALSE(s.symmetry) << c.system << " x" << c.racks;
    EXPECT_EQ(s.tasks.size(), build_schedule(ring_request(CollectiveOp::all_reduce, c.gpus, 1ull << 24), g).tasks.size());
  }
}

// The engine's results from the quotient are the full run's: against the full schedule simulated with every
// transfer (aggregation off) where that is affordable, and against its aggregated run otherwise.
TEST(RingQuotient, RunsAsTheFullScheduleDoes) {
  const struct {
    std::string system;
    int racks, gpus;
    std::uint64_t bytes;
    bool every_transfer;
  } cases[] = {{"hgx-h100", 4, 32, 1ull << 24, true},
               {"hgx-h100", 4, 32, 1000003, true},  // pieces of 3 906 or 3 907 bytes
               {"hgx-h100", 8, 64, 1ull << 30, true},
               {"hgx-h100", 3, 24, 1ull << 28, true},  // an odd node count
               {"hgx-h100", 1, 8, 1000003, true},     // one node: the ring's turns
               {"gb200-nvl72", 1, 72, 1ull << 30, true},
               {"gb300-nvl72", 1, 36, 1000000, true},
               {"gb200-nvl72", 2, 144, 1ull << 30, false},
               {"gb300-nvl72", 2, 144, 1ull << 28, false}};
  for (const auto& c : cases) {
    const TopologyGraph g = test::load_graph(c.system, c.racks);
    const Calibration cal = Calibration::none();
    const Simulation sim(g, cal);
    const CollectiveRequest r = ring_request(CollectiveOp::all_reduce, c.gpus, c.bytes);
    const Schedule listed = schedule_for_engine(sim, g, r, cal, RunOptions{});
    ASSERT_TRUE(listed.symmetry) << c.system;
    const RunResult q = sim.run(listed);
    RunOptions reference;
    reference.aggregate = !c.every_transfer;
    const RunResult f = sim.run(build_schedule(r, g), reference);
    const std::string what = c.system + " x" + std::to_string(c.racks) + " " + std::to_string(c.bytes) + " B";
    EXPECT_EQ(q.engine.mode, "aggregated") << what;
    EXPECT_EQ(q.engine.tasks, f.engine.tasks) << what;
    // Pieces of a buffer not divisible by them differ by a byte (chunk_layout.hpp): an orbit's listed task moves the
    // orbit's mean (as the refinement's quotient moves its class's), where each image of the full run moves its own,
    // so links see the mean. Measured (session 53): where the sizes divide, identical to 9 digits (HGX against every
    // transfer, GB200 and GB300 against the refinement's quotient), link bytes within 5e-6; 1 000 003 B on 4 HGX
    // nodes (3 906-3 907 B pieces) against every transfer: time 8e-6, link bytes 1.9e-4, busy times 4.9e-4 of the
    // run; 1 000 000 B on 2 GB200 racks (434-435 B pieces; the refinement finds too little symmetry there and runs
    // every transfer, 40 s, so not a case here): time 1.4e-4, a phase 2.6e-4 of the run, link bytes 9.7e-4.
    EXPECT_NEAR(q.time_s, f.time_s, 2e-4 * f.time_s) << what;
    ASSERT_EQ(q.phases.size(), f.phases.size()) << what;
    for (std::size_t p = 0; p < q.phases.size(); ++p) EXPECT_NEAR(q.phases[p].time_s, f.phases[p].time_s, 5e-4 * f.time_s) << what;
    // Per link: the same links, as many bytes, busy as long.
    ASSERT_EQ(q.links.size(), f.links.size()) << what;
    {
      double worst_bytes = 0, worst_busy = 0;
      for (std::size_t l = 0; l < q.links.size(); ++l) {
        worst_bytes = std::max(worst_bytes, std::fabs(q.links[l].bytes / f.links[l].bytes - 1));
        worst_busy = std::max(worst_busy, std::fabs(q.links[l].busy_s - f.links[l].busy_s) / f.time_s);
      }
      std::printf("%s: time %.9g vs %.9g, worst link bytes %.3g, worst busy %.3g of the time\n", what.c_str(), q.time_s, f.time_s, worst_bytes, worst_busy);
    }
    for (std::size_t l = 0; l < q.links.size(); ++l) {
      EXPECT_EQ(q.links[l].name, f.links[l].name) << what;
      EXPECT_NEAR(q.links[l].bytes, f.links[l].bytes, 2e-3 * f.links[l].bytes) << what << " " << f.links[l].name;
      EXPECT_NEAR(q.links[l].busy_s, f.links[l].busy_s, 1e-3 * f.time_s) << what << " " << f.links[l].name;
    }
  }
}

// A failure, a trace or GPU reduction kernels: the full schedule (quotient_refused says why); a platform that
// breaks the group (one NIC port of the rings' path at half its bandwidth): symmetry_breaks names the link.
TEST(RingQuotient, TheFullScheduleWhereTheRunBreaksTheSymmetry) {
  const TopologyGraph g = test::load_graph("gb200-nvl72", 2);
  const Calibration cal = Calibration::none();
  const CollectiveRequest r = ring_request(CollectiveOp::all_reduce, 144, 1ull << 24);
  FailureScenario degraded;
  degraded.items.push_back(parse_failure_item("link:r0.t0.nic0-port@0.5"));
  const Simulation with_failure(g, cal, degraded);
  const Schedule listed = build_schedule_quotient(r, g, cal);
  ASSERT_TRUE(listed.symmetry);
  EXPECT_EQ(with_failure.quotient_refused(listed, RunOptions{}), "a failure scenario");
  EXPECT_FALSE(schedule_for_engine(with_failure, g, r, cal, RunOptions{}).symmetry);
  const PlatformModel model(g, cal, degraded);
  const std::string why = symmetry_breaks(model, listed);
  EXPECT_NE(why.find("r0.t0.nic0-port"), std::string::npos) << why;
  const Simulation healthy(g, cal);
  RunOptions trace;
  trace.record_trace = true;
  EXPECT_FALSE(schedule_for_engine(healthy, g, r, cal, trace).symmetry);
  RunOptions kernels;
  kernels.gpu_reduce_kernel = true;
  EXPECT_EQ(healthy.quotient_refused(listed, kernels), "GPU reduction kernels share their GPUs");
  EXPECT_EQ(healthy.quotient_refused(listed, RunOptions{}), "");
}

// One NVLink domain over two racks (NVL36x2: the switch trays' cables join the racks): the ring's turns are a symmetry
// of the ring but not of the routes (a GPU's neighbour is in its own rack or across the cables), so the topology's
// check refuses the listing and the engine gets the full schedule.
TEST(RingQuotient, OneDomainWhoseRoutesDoNotTurnWithTheRing) {
  const TopologyGraph g = test::load_graph("gb200-nvl36x2", 2);
  const Calibration cal = Calibration::none();
  const CollectiveRequest r = ring_request(CollectiveOp::all_reduce, 72, 1ull << 24);
  const Schedule listed = build_schedule_quotient(r, g, cal);
  ASSERT_TRUE(listed.symmetry);
  EXPECT_EQ(listed.symmetry->rank_maps.size(), 72u);
  const Simulation sim(g, cal);
  EXPECT_NE(sim.quotient_refused(listed, RunOptions{}), "");
  const Schedule used = schedule_for_engine(sim, g, r, cal, RunOptions{});
  EXPECT_FALSE(used.symmetry);
  EXPECT_EQ(used.tasks.size(), build_schedule(r, g).tasks.size());
}

}  // namespace
}  // namespace racksim
