// `racksim serve` in the light CLI: the HTTP server lives in racksim-serve (the same CLI with cpp-httplib,
// OpenSSL and the server linked in), whose libraries cost ~4 ms of start-up that every other command would
// pay (issue 14, docs/performance.md). This command hands its whole command line to it: the same options,
// the same help, the same answers.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "sim/core/errors.hpp"

#ifndef RACKSIM_SERVE_PATH
#error "RACKSIM_SERVE_PATH (the racksim-serve executable) must be defined by the build"
#endif

namespace racksim::cli {

namespace {
// argv[0] as the user typed it (racksim-serve's help and errors name it), from /proc/self/cmdline.
std::string program_name() {
  std::string name = "racksim";
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    std::string first;
    for (int c; (c = std::fgetc(f)) != EOF && c != '\0';) first += static_cast<char>(c);
    std::fclose(f);
    if (!first.empty()) name = first;
  }
  return name;
}
}  // namespace

static void add_serve_stub(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("serve", "the course's interactive figures and a JSON API of the CLI, on http://127.0.0.1:PORT/");
  cmd->prefix_command();  // every argument after `serve` goes to racksim-serve unparsed, --help included
  cmd->set_help_flag();
  cmd->callback([cmd, &global] {
    std::vector<std::string> args{program_name(), "--topologies", global.topology_dir, "serve"};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(RACKSIM_SERVE_PATH, argv.data());
    throw SimulationError(std::string("cannot start ") + RACKSIM_SERVE_PATH + ": " + std::strerror(errno));
  });
}
RACKSIM_REGISTER_COMMAND("serve", add_serve_stub);

}  // namespace racksim::cli
