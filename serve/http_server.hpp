#pragma once
// `racksim serve`: one page and a JSON API over loopback HTTP (cpp-httplib). Every API request becomes
// the CLI's argument list (api_command.hpp), is checked against the interactive limits
// (interactive_policy.hpp) and runs as a child process of the racksim binary (child_process.hpp), at most
// `workers` at once. Status codes: 200 the CLI's JSON (also when a check answers no: imex-check exits 1
// with its report on stdout); 400 bad input (the CLI's one line, or the server's
// own for a parameter it does not pass on); 404 no such command; 422 valid input that cannot run (exit 1)
// or a request over the interactive limits; 500 an internal error or a crash of the child; 503 too busy;
// 504 over the wall-clock limit. docs/serve.md has the API.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "serve/api_command.hpp"
#include "serve/child_process.hpp"
#include "serve/interactive_policy.hpp"

namespace racksim::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";   // loopback only: the server runs simulations for whoever can reach it
  int port = 8080;                  // 0: any free port
  int workers = 2;                  // child processes at once
  double request_timeout_s = 60;    // wall-clock limit of one child
  double queue_timeout_s = 60;      // longest wait for a free worker before 503
  std::uint64_t child_memory_bytes = kDefaultChildAddressSpace;  // RLIMIT_AS of each child (0: none)
  std::string program;              // the racksim binary (/proc/self/exe)
  std::vector<std::string> global_args;  // before the command in every child (--topologies=DIR)
  std::string web_dir;              // index.html and its scripts
  std::string d3_js;                // Debian's libjs-d3 (/usr/share/javascript/d3/d3.min.js)
  bool log_requests = true;         // one line per request on stderr
  CommandTable commands;
  InteractiveLimits limits;
};

// Binds, calls on_listening with the address ("http://127.0.0.1:8080/"), serves until SIGINT or SIGTERM.
// Returns 0 after a signal; throws InputError (naming --port) when it cannot bind.
int run_server(const ServeOptions& options, const std::function<void(const std::string& url)>& on_listening);

}  // namespace racksim::serve
