#include <cmath>
#include <map>

#include "cli/commands.hpp"

namespace racksim::cli {

namespace {
std::map<std::string, CommandAdder>& registry() {
  static std::map<std::string, CommandAdder> commands;  // sorted: --help lists them alphabetically
  return commands;
}
}  // namespace

bool register_command(const std::string& name, CommandAdder adder) {
  registry().emplace(name, std::move(adder));
  return true;
}

void add_registered_commands(CLI::App& app, const GlobalOptions& global) {
  for (const auto& [name, adder] : registry()) adder(app, global);
}

void add_format_option(CLI::App& cmd, std::string& format, const std::string& default_format,
                       std::initializer_list<std::string> allowed) {
  format = default_format;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  cmd.add_option("--format", format, "output format: " + list)->check(CLI::IsMember(std::vector<std::string>(allowed)));
}

int racks_or_default(const std::optional<int>& racks_option, const TopologySpec& spec) {
  return racks_option ? *racks_option : spec.rack.default_racks;
}

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, digits - magnitude);
  return std::round(value * scale) / scale;
}

}  // namespace racksim::cli
