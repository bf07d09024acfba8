// racksim serve: the course's three interactive figures and a JSON API of the CLI's commands, over HTTP on
// 127.0.0.1 (serve/, docs/serve.md). The API's commands and options are read from this CLI's own
// definitions, so a request can only say what a command line can.
#include <unistd.h>

#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "serve/http_server.hpp"
#include "sim/core/errors.hpp"

#ifndef RACKSIM_WEB_DIR
#error "RACKSIM_WEB_DIR must be defined by the build"
#endif
#ifndef RACKSIM_D3_JS
#error "RACKSIM_D3_JS must be defined by the build"
#endif

namespace racksim::cli {

namespace {

std::string long_name(const CLI::Option* opt) {
  return opt->get_lnames().empty() ? std::string() : opt->get_lnames().front();
}

// What each served command accepts, from CLI11: positionals in order, long options (flags and repeatable
// ones marked), less the options a server never passes on.
serve::CommandTable command_table(CLI::App& app) {
  serve::CommandTable table;
  for (const auto& name : serve::served_commands()) {
    CLI::App* sub = app.get_subcommand(name);  // throws if a served command was renamed: a bug, caught by tests
    serve::CommandInfo c;
    c.name = name;
    for (const CLI::Option* opt : sub->get_options()) {
      if (!opt->nonpositional()) {
        c.positionals.push_back(opt->get_name());
        continue;
      }
      const std::string n = long_name(opt);
      if (n == "format") c.has_format = true;
      if (n.empty() || serve::is_denied_option(n)) continue;
      serve::OptionInfo info;
      info.flag = opt->get_expected_max() == 0;  // add_flag sets expected(0)
      info.repeatable = opt->get_items_expected_max() > 1;
      c.options[n] = info;
    }
    table[name] = c;
  }
  return table;
}

struct ServeCliOptions {
  int port = 8080, workers = 0;
  double timeout_s = 60;
  std::string web_dir = RACKSIM_WEB_DIR, d3_js = RACKSIM_D3_JS;
  bool quiet = false;
};

}  // namespace

static void add_serve_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<ServeCliOptions>();
  auto* cmd = app.add_subcommand("serve", "the course's interactive figures and a JSON API of the CLI, on http://127.0.0.1:PORT/");
  cmd->add_option("--port", o->port, "TCP port on 127.0.0.1 (default 8080; 0: any free port, printed)")->check(CLI::Range(0, 65535));
  cmd->add_option("--workers", o->workers, "requests computed at once (default: the CPU count, at least 2)")->check(CLI::Range(1, 64));
  cmd->add_option("--timeout", o->timeout_s, "wall-clock limit of one request, seconds (default 60)")->check(number_in(1, 3600));
  cmd->add_option("--web-dir", o->web_dir, "directory of the page (default: the source tree's web/)")->check(CLI::ExistingDirectory);
  cmd->add_flag("--quiet", o->quiet, "do not log requests on stderr");
  cmd->callback([&app, &global, o] {
    serve::ServeOptions s;
    s.port = o->port;
    s.workers = o->workers > 0 ? o->workers : std::max(2u, std::thread::hardware_concurrency());
    s.request_timeout_s = o->timeout_s;
    s.web_dir = o->web_dir;
    s.d3_js = o->d3_js;
    s.log_requests = !o->quiet;
    s.commands = command_table(app);
    // The children are this very binary, so the API's answers are the CLI's byte for byte; they keep
    // the server's --topologies.
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
    s.program = std::string(exe, static_cast<std::size_t>(n));
    s.global_args = {"--topologies=" + global.topology_dir};
    serve::run_server(s, [](const std::string& url) {
      std::cout << "racksim serve: listening on " << url << " (Ctrl-C stops)" << std::endl;
    });
  });
}

RACKSIM_REGISTER_COMMAND("serve", add_serve_command);

}  // namespace racksim::cli
