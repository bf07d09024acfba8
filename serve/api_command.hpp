#pragma once
// The HTTP API is the CLI: a request names a subcommand and its options, and is turned into exactly the
// argument list `racksim <command> --option=value ... --format=json` (docs/serve.md). What a command
// accepts comes from the CLI's own definitions (CommandInfo, built by cli/cmd_serve.cpp from CLI11), less
// the options a server must not offer (files written, process settings). Values are checked only for what
// the server must refuse (paths, control characters, size); their meaning is the CLI's to check.
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace racksim::serve {

struct OptionInfo {
  bool flag = false;        // takes no value (--no-checklist); the API takes 1/true or 0/false
  bool repeatable = false;  // may be given several times (--alloc, --fail)
};

struct CommandInfo {
  std::string name;                           // "collective"
  std::vector<std::string> positionals;       // in order ("system", "src", "dst")
  std::map<std::string, OptionInfo> options;  // long names without dashes ("min-bytes")
  bool has_format = false;                    // --format exists: the server forces json
};
using CommandTable = std::map<std::string, CommandInfo>;

// Commands the server offers, and option names it never passes on (whatever command declares them).
const std::vector<std::string>& served_commands();
bool is_denied_option(const std::string& name);

// A request the server refuses before running anything; HTTP status 400 (bad request) or 404 (no such
// command). The message is one line.
class RequestError : public std::runtime_error {
 public:
  RequestError(int http_status, const std::string& message) : std::runtime_error(message), status_(http_status) {}
  int http_status() const { return status_; }

 private:
  int status_;
};

using Params = std::vector<std::pair<std::string, std::string>>;  // in request order; keys may repeat

struct BuiltCommand {
  std::vector<std::string> args;  // after the program name: {"collective", "--system=gb200-nvl72", ...}
  std::string display;            // the same as a shell command: racksim collective --system gb200-nvl72 ...
};

// RequestError for an unknown command or parameter, a repeated single parameter, a flag value other than
// 1/true/0/false, or a value the server does not pass on (a path, control characters, > 512 characters).
BuiltCommand build_command(const CommandTable& table, const std::string& command, const Params& params);

// One shell word: unchanged when it is safe, else in single quotes.
std::string shell_quote(const std::string& word);

}  // namespace racksim::serve
