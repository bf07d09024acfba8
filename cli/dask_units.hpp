#pragma once
// `--dask ADDRESS`: a command's work units (models/work/work_units.hpp) run on a Dask cluster. The CLI
// cannot speak Dask's protocol, so it starts racksim's Python driver (`python3 -m racksim.dask_driver
// ADDRESS`, bindings/python/racksim/dask_driver.py) with the units on its stdin and reads their results,
// in order, from its stdout (docs/dask.md).
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace racksim::cli {

struct DaskOptions {
  std::string address;     // "" = run here, as without --dask
  double timeout_s = 10;   // to reach the scheduler
};

// Adds --dask ADDRESS and --dask-timeout SECONDS.
void add_dask_options(CLI::App& cmd, DaskOptions& o);

// The units' results in order. InputError (exit 2) when Python, racksim's Python package or
// dask.distributed is missing, or no scheduler answers at the address within the timeout; a unit's own
// InputError or SimulationError as the local run would raise it.
std::vector<std::string> run_units_on_dask(const DaskOptions& o, const std::vector<std::string>& units, const std::string& desc);

}  // namespace racksim::cli
