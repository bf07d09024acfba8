// racksim command-line entry point: parse, dispatch to a subcommand, map errors to exit codes
// (0 ok, 2 bad input, 1 a simulation that cannot run or a check whose answer is no, 3 an internal error).
#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "sim/core/hugepage_malloc.hpp"
#include "sim/core/errors.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace {
// Whether this call may build a large run: then it is worth re-executing once with malloc on huge pages
// (sim/core/hugepage_malloc.hpp). The exec costs ~5 ms on a paravirtualised VM (an 8-GPU collective 20 ->
// 25 ms), while a 4 608-GPU all-reduce saves 0.5-0.9 s of the caller's page faults and a 25-size sweep half
// its caller's CPU (320 -> 150 ms); so only commands that search, fit or run many simulations (plan,
// validate, calibrate, sweep, goodput) and runs of 512 GPUs or 8 racks and more do it. A guess from the
// words of the command line, before parsing: a wrong guess costs time, never a result.
bool may_be_large(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string command = argv[1];
  for (const char* many : {"plan", "validate", "calibrate", "sweep", "goodput"})
    if (command == many) return true;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string word = argv[i];
    const long value = std::strtol(argv[i + 1], nullptr, 10);
    if ((word == "--gpus" && value >= 512) || (word == "--racks" && value >= 8)) return true;
  }
  return false;
}

// The heap a call that is not re-executed puts on huge pages at start (heap_on_huge_pages). 16 MiB: a 72-GPU ring's
// caller touches ~4 MB; measured on the dev VM (perf stat, 12 runs each, interleaved): 8 MiB 359-551 faults,
// 16 MiB 257-262, 32 MiB no better (657: fewer huge pages found free). Untouched huge pages are never resident.
constexpr std::size_t kCliHeapOnHugePagesBytes = std::size_t{16} << 20;
}  // namespace

int main(int argc, char** argv) {
  if (may_be_large(argc, argv)) racksim::reexec_with_hugepage_malloc(argv);
  // Not re-executed (or the exec failed): the first 16 MiB of this call's heap on huge pages, in this process. A
  // 72-GPU ring's caller (its 10 224-task schedule, encoded for the engine) took 1 160 page faults and 25 ms of
  // CPU on the dev VM, where a fault costs ~20 us; 260 and 11-13 ms with it (docs/performance.md, session 48).
  // RACKSIM_HUGEPAGES=off leaves it out too.
  racksim::heap_on_huge_pages(kCliHeapOnHugePagesBytes);
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
  } catch (const CLI::ConversionError& e) {
    // Values are checked on their text first (cli_common.cpp: a whole number that fits 64 bits); what still
    // fails to convert is a whole number beyond a 32-bit option's range. CLI11 says "Could not convert:
    // NAME = VALUE", which names neither what is allowed nor the limit.
    const std::string what = e.what(), prefix = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.rfind(prefix, 0) == 0 && eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size()), value = what.substr(eq + 3);
      std::cerr << "racksim: error: "
                << racksim::one_line(name + ": '" + value + "' is out of range; allowed: a whole number in [-2147483648, 2147483647] "
                                     "(the option's own limits: racksim --help)",
                                     racksim::kMaxMessageBytes)
                << "\n";
    } else {
      std::cerr << "racksim: error: " << racksim::one_line(what, racksim::kMaxMessageBytes) << " (see racksim --help)\n";
    }
    return 2;
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
