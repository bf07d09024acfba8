#include "serve/api_command.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace racksim::serve {

namespace {

constexpr std::size_t kMaxValueChars = 512;  // assumption: longest real value is an --alloc spec (~60 chars)

std::string list_of(const CommandInfo& c) {
  std::string s;
  for (const auto& p : c.positionals) s += (s.empty() ? "" : ", ") + p;
  for (const auto& [name, info] : c.options) s += (s.empty() ? "" : ", ") + name;
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

// The server answers for shipped systems, models and calibrations only: a value naming a file could read
// (or, through a future option, write) anything the server's user can.
void check_value(const std::string& command, const std::string& key, const std::string& value) {
  const std::string where = "racksim serve: " + command + " parameter '" + key + "'";
  if (value.size() > kMaxValueChars)
    throw RequestError(400, where + ": a value of " + std::to_string(value.size()) + " characters; at most " +
                                std::to_string(kMaxValueChars));
  for (unsigned char ch : value)
    if (ch < 0x20 || ch > 0x7e) throw RequestError(400, where + ": control or non-ASCII characters; printable ASCII only");
  if (value.find('/') != std::string::npos || value.find('\\') != std::string::npos || ends_with(value, ".json"))
    throw RequestError(400, where + ": '" + value + "' is a file path; the server takes shipped names only "
                                    "(racksim systems, model presets, calibration default or none)");
}

bool flag_value(const std::string& command, const std::string& key, const std::string& value) {
  if (value == "1" || value == "true" || value.empty()) return true;
  if (value == "0" || value == "false") return false;
  throw RequestError(400, "racksim serve: " + command + " parameter '" + key + "' is a flag: '" + value +
                              "'; allowed 1, true, 0 or false");
}

}  // namespace

const std::vector<std::string>& served_commands() {
  // The CLI's questions a course reader or planner asks, plus fig4 (the course's model, for the page).
  // Not served: calibrate, validate, schedule, offload (files in and out), systems (a list: GET /api).
  static const std::vector<std::string> commands = {"collective", "fig4", "imex-check", "place", "plan",
                                                    "route", "show", "sweep"};
  return commands;
}

bool is_denied_option(const std::string& name) {
  // help: not an answer; format: the API answers JSON; trace/out: files written on the server;
  // jobs: engine processes per request (the server bounds its own); topologies: a directory;
  // dask, dask-timeout: a request must not make the server connect to another machine (docs/dask.md);
  // plan's fit, fit-out, fit-report, validate, heldout-table: the calibration's file work (rows files in,
  // parameters, reports and tables out, a minute of fitting), not served for the reasons validate is not.
  static const std::set<std::string> denied = {"help", "format",       "trace", "out",     "jobs",       "topologies",
                                               "dask", "dask-timeout", "fit",   "fit-out", "fit-report", "validate",
                                               "heldout-table"};
  return denied.count(name) > 0;
}

std::string shell_quote(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string("-_=.,:@%+").find(static_cast<char>(c)) != std::string::npos;
  });
  if (safe) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

BuiltCommand build_command(const CommandTable& table, const std::string& command, const Params& params) {
  const auto it = table.find(command);
  if (it == table.end()) {
    std::string names;
    for (const auto& [name, c] : table) names += (names.empty() ? "" : ", ") + name;
    throw RequestError(404, "racksim serve: no command '" + command + "'; the API offers " + names);
  }
  const CommandInfo& c = it->second;
  std::map<std::string, std::string> positional_values;
  std::vector<std::pair<std::string, std::string>> options;  // (name, value) in request order; flags: value ""
  std::set<std::string> seen;
  for (const auto& [key, value] : params) {
    const bool positional = std::find(c.positionals.begin(), c.positionals.end(), key) != c.positionals.end();
    const auto opt = c.options.find(key);
    if (!positional && opt == c.options.end())
      throw RequestError(400, "racksim serve: " + command + " has no parameter '" + key + "'; allowed: " + list_of(c));
    const bool repeatable = !positional && opt->second.repeatable;
    if (!repeatable && !seen.insert(key).second)
      throw RequestError(400, "racksim serve: " + command + " parameter '" + key + "' given twice; it takes one value");
    if (positional) {
      check_value(command, key, value);
      positional_values[key] = value;
    } else if (opt->second.flag) {
      if (flag_value(command, key, value)) options.emplace_back(key, "");
    } else {
      check_value(command, key, value);
      options.emplace_back(key, value);
    }
  }
  for (std::size_t i = 1; i < c.positionals.size(); ++i)  // positionals are passed in order: no gaps
    if (positional_values.count(c.positionals[i]) && !positional_values.count(c.positionals[i - 1]))
      throw RequestError(400, "racksim serve: " + command + " parameter '" + c.positionals[i] + "' needs '" +
                                  c.positionals[i - 1] + "' too");
  BuiltCommand b;
  b.args.push_back(command);
  b.display = "racksim " + command;
  for (const auto& p : c.positionals) {  // shown where the CLI's help shows them; passed after "--"
    const auto v = positional_values.find(p);
    if (v != positional_values.end()) b.display += " " + shell_quote(v->second);
  }
  for (const auto& [name, value] : options) {
    // One token per option: a value starting with '-' stays a value, never becomes another option.
    b.args.push_back(value.empty() && c.options.at(name).flag ? "--" + name : "--" + name + "=" + value);
    b.display += " --" + name + (c.options.at(name).flag ? "" : " " + shell_quote(value));
  }
  if (c.has_format) {
    b.args.push_back("--format=json");
    b.display += " --format json";
  }
  if (!positional_values.empty()) {
    b.args.push_back("--");
    for (const auto& p : c.positionals) {
      const auto v = positional_values.find(p);
      if (v != positional_values.end()) b.args.push_back(v->second);
    }
  }
  return b;
}

}  // namespace racksim::serve
