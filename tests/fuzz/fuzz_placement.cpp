// Placement specs (`racksim place --alloc NAME:KIND:SIZE[:NODE]`, one per line of the input) on one GB200
// tray in NUMA mode, then placed in order.
#include <sstream>
#include <vector>

#include "fuzz_common.hpp"
#include "models/memory/placement.hpp"
#include "sim/topo/system_catalog.hpp"

namespace {
const racksim::memory::TrayMemoryModel& tray() {
  static const racksim::TopologySpec spec = racksim::SystemCatalog::shipped().load("gb200-nvl72");
  static const racksim::memory::TrayMemoryModel model(spec, racksim::memory::MemoryMode::numa,
                                                      racksim::memory::TuningSettings::untuned(),
                                                      racksim::memory::TrayAssumptions{});
  return model;
}
}  // namespace

void racksim::fuzz::one_input(const std::string& text) {
  std::istringstream lines(text);
  std::vector<racksim::memory::AllocationRequest> requests;
  for (std::string line; std::getline(lines, line) && requests.size() < 64;)
    requests.push_back(racksim::memory::parse_allocation(line, tray(), "--alloc"));
  (void)racksim::memory::place_allocations(tray(), requests);
}
