// racksim command-line entry point: parse, dispatch to a subcommand, map errors to exit codes
// (0 ok, 2 bad input, 1 a simulation that cannot run or a check whose answer is no, 3 an internal error).
#include <iostream>

#include "cli/commands.hpp"
#include "sim/core/errors.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

int main(int argc, char** argv) {
  CLI::App app{"racksim: discrete-event simulator and performance model of NVLink rack-scale GPU systems"};
  app.require_subcommand(1);
  racksim::cli::GlobalOptions global;
  global.topology_dir = RACKSIM_TOPOLOGY_DIR;
  app.add_option("--topologies", global.topology_dir, "directory of the shipped system JSON files")
      ->check(CLI::ExistingDirectory);

  // argv[1] when it is a subcommand's name (an option first, --topologies or --help: every command).
  racksim::cli::add_registered_commands(app, global, argc > 1 ? argv[1] : "");
  racksim::cli::check_option_values(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "racksim: error: " << racksim::one_line(e.what(), racksim::kMaxMessageBytes) << " (see racksim --help)\n";
    return 2;
  } catch (const racksim::InputError& e) {
    std::cerr << "racksim: error: " << racksim::one_line(e.what(), racksim::kMaxMessageBytes) << "\n";
    return 2;
  } catch (const racksim::cli::NegativeVerdict& e) {
    std::cerr << "racksim: " << racksim::one_line(e.what(), racksim::kMaxMessageBytes) << "\n";
    return 1;
  } catch (const racksim::SimulationError& e) {
    std::cerr << "racksim: cannot simulate: " << racksim::one_line(e.what(), racksim::kMaxMessageBytes) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "racksim: internal error: " << racksim::one_line(e.what(), racksim::kMaxMessageBytes) << "\n";
    return 3;
  }
  return 0;
}
