#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "cli/commands.hpp"
#include "sim/core/errors.hpp"

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

void add_registered_commands(CLI::App& app, const GlobalOptions& global, const std::string& only) {
  if (const auto it = registry().find(only); it != registry().end()) {
    it->second(app, global);
    return;
  }
  for (const auto& [name, adder] : registry()) adder(app, global);
}

void add_format_option(CLI::App& cmd, std::string& format, const std::string& default_format,
                       std::initializer_list<std::string> allowed) {
  format = default_format;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  cmd.add_option("--format", format, "output format: " + list)->check(CLI::IsMember(std::vector<std::string>(allowed)));
}

namespace {

// What CLI11 2.1 would let through: an empty value becomes a default-constructed number ("--racks ''"
// read as 0 ... or as the option's default), "-1" for an unsigned option wraps to 2^64-1, "010" is read as
// octal and "0x10" as hex, and an overflowing integer is clamped by strtoll. Every value is checked here
// first, on its text; the message echoes it escaped to one line.
std::string check_value(const std::string& text, const std::string& type) {
  if (text.empty()) return "an empty value; allowed: a non-empty " + (type.empty() ? std::string("value") : type);
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "'" + one_line(text) + "' contains a control character; allowed: printable text";
  const bool is_int = type == "INT", is_uint = type == "UINT", is_float = type == "FLOAT";
  if (is_int || is_uint) {
    const std::size_t first = (is_int && text[0] == '-') ? 1 : 0;
    const bool digits = first < text.size() && text.find_first_not_of("0123456789", first) == std::string::npos;
    if (!digits)
      return "'" + one_line(text) + "'; allowed: a whole number in decimal" + std::string(is_uint ? " (not negative)" : "");
    errno = 0;
    if (is_int) (void)std::strtoll(text.c_str(), nullptr, 10);
    else (void)std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return "'" + one_line(text) + "' is out of range; allowed: a whole number that fits 64 bits";
    if (text.size() > first + 1 && text[first] == '0')
      return "'" + one_line(text) + "'; allowed: a decimal number without leading zeros (not octal)";
  }
  if (is_float) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(v) || errno == ERANGE)
      return "'" + one_line(text) + "'; allowed: a finite number";
  }
  return "";
}

void harden(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_min() == 0) continue;  // flags and --help take no value
    std::string type = opt->get_type_name();
    type = type.substr(0, type.find(':'));
    opt->check(CLI::Validator([type](std::string& text) { return check_value(text, type); }, "", "checked value"));
  }
  for (CLI::App* sub : app.get_subcommands({})) harden(*sub);
}

}  // namespace

void check_option_values(CLI::App& app) { harden(app); }

namespace {
// A number the validators below can judge, or nullopt (not a number, inf, nan: check_option_values words it
// too, but a range check runs first and must not pass them).
std::optional<double> finite_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}
CLI::Validator number_at_least(bool zero_allowed, bool whole) {
  const std::string allowed = std::string(whole ? "a whole number " : "a finite number ") + (zero_allowed ? ">= 0" : "> 0");
  return CLI::Validator(
      [zero_allowed, allowed](std::string& text) -> std::string {
        const auto v = finite_number(text);
        if (v && (zero_allowed ? *v >= 0 : *v > 0)) return "";
        return "'" + one_line(text) + "'; allowed: " + allowed;
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE", allowed);
}
}  // namespace

CLI::Validator non_negative_number(bool whole) { return number_at_least(true, whole); }
CLI::Validator positive_number(bool whole) { return number_at_least(false, whole); }
CLI::Validator number_in(double lo, double hi) {
  const std::string allowed = "a number in [" + number_text(lo) + ", " + number_text(hi) + "]";
  return CLI::Validator(
      [lo, hi, allowed](std::string& text) -> std::string {
        const auto v = finite_number(text);
        if (v && *v >= lo && *v <= hi) return "";
        return "'" + one_line(text) + "'; allowed: " + allowed;
      },
      "[" + number_text(lo) + " - " + number_text(hi) + "]", allowed);
}

void keep_until_exit(std::shared_ptr<const void> object) {
  static auto* kept = new std::vector<std::shared_ptr<const void>>;  // never destroyed (see the header)
  kept->push_back(std::move(object));
}

int racks_or_default(const std::optional<int>& racks_option, const TopologySpec& spec) {
  return racks_option ? *racks_option : spec.rack.default_racks;
}

int racks_for_gpus(const std::optional<int>& racks_option, const TopologySpec& spec, int gpus) {
  const int racks = racks_or_default(racks_option, spec);
  if (racks_option || gpus <= 0) return racks;
  const int needed = racks_to_hold(spec, gpus);
  // Beyond the system's cap the default stays, and the rank placement says how many GPUs it has.
  return needed > racks && needed <= spec.rack.max_racks ? needed : racks;
}

double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double magnitude = std::ceil(std::log10(std::fabs(value)));
  const double scale = std::pow(10.0, digits - magnitude);
  return std::round(value * scale) / scale;
}

}  // namespace racksim::cli
