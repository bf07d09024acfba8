#pragma once
// Each subcommand lives in its own cmd_<name>.cpp and registers itself with RACKSIM_REGISTER_COMMAND;
// main.cpp adds every registered command to the app (sorted by name). Subcommands parse options and
// call the library; they hold no model logic. A subcommand reports bad input by throwing
// racksim::InputError; main turns it into one line on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/topo/topology_spec.hpp"

namespace racksim::cli {

struct GlobalOptions {
  std::string topology_dir;  // --topologies: where shipped system files are read from
};

// A check command's negative answer (`schedule check` found violations, `imex-check` says the job cannot
// start): the report is already on stdout; main prints "racksim: <what>" on stderr and exits 1, so that
// scripts can use the command as a test.
class NegativeVerdict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using CommandAdder = std::function<void(CLI::App& app, const GlobalOptions& global)>;
// Registers a subcommand; returns true so it can initialise a static.
bool register_command(const std::string& name, CommandAdder adder);
// Adds every registered command, or only `only` when that names one: a call names its subcommand first
// (`racksim collective ...`), and setting up the options of all ~17 commands was a third of a bare
// start (~1 ms). Its parse, help and errors are those of the command alone either way.
void add_registered_commands(CLI::App& app, const GlobalOptions& global, const std::string& only = "");

#define RACKSIM_REGISTER_COMMAND(name, adder) \
  static const bool racksim_command_registered_##adder = ::racksim::cli::register_command(name, adder)

// Adds to every option of `app` and its subcommands a check of the text given: not empty, no control
// characters, and for numeric options a plain decimal (no sign on unsigned options, no octal or hex, no
// overflow) or a finite number. Called once by main after every command is registered.
void check_option_values(CLI::App& app);

// Shared option helpers.
// In place of CLI::NonNegativeNumber / CLI::PositiveNumber, whose failures read "Value -1 not in range
// 0.000000 to 1797693...(309 digits).000000" (and for 0 under PositiveNumber the same range, which holds 0):
// "'-1'; allowed: a finite number >= 0" / "'0'; allowed: a whole number > 0" (`whole`: an integer option).
// number_in: for a range of floating-point values, in place of CLI::Range's six decimals.
CLI::Validator non_negative_number(bool whole = false);
CLI::Validator positive_number(bool whole = false);
CLI::Validator number_in(double lo, double hi);
void add_format_option(CLI::App& cmd, std::string& format, const std::string& default_format,
                       std::initializer_list<std::string> allowed);
// --racks as given, or the system's default when the option was not given.
int racks_or_default(const std::optional<int>& racks_option, const TopologySpec& spec);
// The same, but without --racks a --gpus count the default racks cannot hold takes the fewest racks (whole NVLink
// domains) that hold it, as many as the system allows ("--gpus 144" on gb200-nvl72: 2 racks).
int racks_for_gpus(const std::optional<int>& racks_option, const TopologySpec& spec, int gpus);
// Keeps `object` alive until the process exits, never destroying it: a call's big objects (a sweep's
// schedules of ~10 000 tasks each, the graph, the Simulation) are returned to the system at exit in one go
// instead of block by block (freeing a 25-size sweep's schedules took ~10-25 ms, docs/performance.md).
// Only for what a command holds until it ends; held from a global, so leak checkers see it as reachable.
void keep_until_exit(std::shared_ptr<const void> object);

// Rounds to `digits` significant digits so JSON output stays readable and stable across platforms.
double round_significant(double value, int digits = 6);

}  // namespace racksim::cli
