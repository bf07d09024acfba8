// Work units (models/work/work_units.hpp): a sweep or a goodput Monte Carlo cut into units, each run on
// its own (as a Dask worker would) and reassembled, gives the local answer byte for byte.
#include <gtest/gtest.h>

#include "models/collectives/registry.hpp"
#include "models/collectives/rank_placement.hpp"
#include "models/failures/goodput.hpp"
#include "models/work/work_units.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/results_io.hpp"
#include "sim/topo/nvlink_partitions.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {
namespace {

TEST(WorkUnits, SweepUnitsGiveTheLocalRunsByteForByte) {
  TopologyGraph graph(SystemCatalog::shipped().load("gb200-nvl72"), 2);
  graph.apply_partitions(parse_partitions("2x9", graph));
  const Calibration cal = load_calibration("default");
  FailureScenario failures;
  failures.items.push_back(parse_failure_item("tray:17"));
  std::vector<CollectiveRequest> requests;
  std::vector<Schedule> schedules;
  const Simulation simulation(graph, cal, failures);
  for (const std::uint64_t bytes : {std::uint64_t{1} << 10, std::uint64_t{1} << 20, std::uint64_t{1} << 30}) {
    CollectiveRequest r;
    r.op = CollectiveOp::all_gather;
    r.algorithm = "auto";
    r.gpus = place_ranks(graph, 32);
    r.bytes = bytes;
    requests.push_back(r);
    schedules.push_back(build_schedule(r, graph, cal));
  }
  std::vector<RunResult> local;
  for (const auto& s : schedules) local.push_back(simulation.run(s));
  const std::vector<std::string> units = collective_units(graph, cal, failures, requests);
  ASSERT_EQ(units.size(), 3u);
  std::vector<std::string> results;
  for (const auto& u : units) results.push_back(run_work_unit(u));
  const std::vector<RunResult> remote = collective_unit_results(results);
  EXPECT_EQ(run_results_to_json_text(remote), run_results_to_json_text(local));
  EXPECT_EQ(run_results_to_csv(remote, "float"), run_results_to_csv(local, "float"));
  EXPECT_EQ(remote[2].channels, local[2].channels);
  EXPECT_GT(remote[2].channels, 0);  // the request's echo travels beside the engine's bytes
}

TEST(WorkUnits, GoodputTrialRangesGiveTheWholeMonteCarlo) {
  GoodputRequest r;
  r.label = "test";
  r.units = 8;
  r.trays_per_unit = 16;
  r.spare_trays_per_unit = 1;
  r.switch_trays_per_rack = 9;
  r.step_s = 10;
  r.checkpoint_bytes = 5.7e12;
  r.storage_Bps = 512e9;
  r.trials = 101;
  r.seed = 7;
  GoodputRequest other = r;
  other.hot_spare_units = 1;
  other.trials = 5;
  const std::vector<GoodputRequest> requests = {r, other};
  const std::vector<std::string> units = goodput_units(requests, 10);
  EXPECT_EQ(units.size(), 11u + 1u);  // 101 trials in tens, then 5
  std::vector<std::string> results;
  for (const auto& u : units) results.push_back(run_work_unit(u));
  const std::vector<GoodputResult> remote = goodput_unit_results(requests, results);
  EXPECT_EQ(goodput_to_json_text(remote), goodput_to_json_text({run_goodput(r), run_goodput(other)}));
  EXPECT_EQ(goodput_to_json_text(goodput_unit_results(requests, [&] {
              std::vector<std::string> rs;
              for (const auto& u : goodput_units(requests)) rs.push_back(run_work_unit(u));
              return rs;
            }())),
            goodput_to_json_text(remote));  // the default split too
  results.pop_back();
  EXPECT_THROW(goodput_unit_results(requests, results), SimulationError);
  EXPECT_THROW(goodput_trials(r, 100, 102), InputError);
}

TEST(WorkUnits, TextThatIsNotAUnitIsBadInput) {
  EXPECT_THROW(run_work_unit("not json"), InputError);
  EXPECT_THROW(run_work_unit(R"({"kind":"dance"})"), InputError);
  EXPECT_THROW(run_work_unit(R"({"kind":"goodput_trials","request":{}})"), InputError);
  try {
    run_work_unit(R"({"kind":"dance"})");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collective or goodput_trials"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace racksim
