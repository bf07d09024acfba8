#include "sim/engine/failure_scenario.hpp"

#include <cmath>
#include <cstdlib>

#include "sim/core/errors.hpp"

namespace racksim {

namespace {

const char* kAccepted =
    "tray:T, switch-tray:S, switch-tray:D.S, switch-chip:D.C, nic:N, link:NAME or link:NAME@F with F in (0, 1) "
    "(T, S, D, C, N non-negative integers; NAME a graph edge as `racksim route` shows its ends)";

[[noreturn]] void bad(const std::string& text) { throw InputError("--fail", "", "'" + text + "'", kAccepted); }

int parse_index(const std::string& digits, const std::string& text) {
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) bad(text);
  return std::atoi(digits.c_str());
}

}  // namespace

FailureItem parse_failure_item(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) bad(text);
  const std::string kind = text.substr(0, colon);
  const std::string arg = text.substr(colon + 1);
  FailureItem item;
  item.text = text;
  if (kind == "tray" || kind == "nic") {
    item.kind = kind == "tray" ? FailureItem::Kind::tray : FailureItem::Kind::nic;
    item.index = parse_index(arg, text);
  } else if (kind == "switch-tray" || kind == "switch-chip") {
    item.kind = kind == "switch-tray" ? FailureItem::Kind::switch_tray : FailureItem::Kind::switch_chip;
    const auto dot = arg.find('.');
    if (dot == std::string::npos) {
      if (item.kind == FailureItem::Kind::switch_chip) bad(text);  // a chip needs its domain
      item.index = parse_index(arg, text);
    } else {
      item.domain = parse_index(arg.substr(0, dot), text);
      item.index = parse_index(arg.substr(dot + 1), text);
    }
  } else if (kind == "link") {
    item.kind = FailureItem::Kind::link;
    const auto at = arg.find('@');
    item.link_name = arg.substr(0, at);
    if (item.link_name.empty()) bad(text);
    if (at != std::string::npos) {
      const std::string f = arg.substr(at + 1);
      char* end = nullptr;
      const double value = std::strtod(f.c_str(), &end);
      if (f.empty() || end != f.c_str() + f.size() || !std::isfinite(value) || value <= 0 || value >= 1) bad(text);
      item.bandwidth_fraction = value;
    }
  } else {
    bad(text);
  }
  return item;
}

}  // namespace racksim
