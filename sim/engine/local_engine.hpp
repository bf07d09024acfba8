#pragma once
// Whether this process can run the SimGrid engine itself. The SimGrid-dependent part of racksim
// (dag_executor.cpp, simgrid_platform.cpp: the racksim_simgrid objects of the build) registers its
// executor here when it is linked in: the Python module, the engine server, the tests and benchmarks.
// The `racksim` CLI is built without it: loading libsimgrid (and the ns-3 libraries Debian's build links
// to it) costs ~22 ms of static initialisation per process, 5x a whole small simulation (issue 14,
// docs/performance.md), so the CLI sends its runs to a warm engine daemon instead (engine_server.hpp).
#include <string>
#include <vector>

#include "sim/engine/compiled_run.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/results/run_result.hpp"

namespace racksim {

class PlatformModel;

using LocalEngineFn = std::vector<RunResult> (*)(const PlatformModel& model, const CompiledRun& run,
                                                  const RunOptions& options);

// Called once, by the static initialiser of sim/engine/simgrid_engine.cpp.
void register_local_engine(LocalEngineFn fn);

// The executor (execute_compiled), or nullptr in a process built without SimGrid.
LocalEngineFn local_engine();

}  // namespace racksim
