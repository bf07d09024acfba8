#include "sim/engine/failure_scenario.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

const char* kAccepted =
    "tray:T, gpu:G, switch-tray:S, switch-tray:D.S, switch-chip:D.C, nvlink:G.C, trunk:D.K, nic:N, ib-link:R.K, "
    "imex:T, link:NAME or link:NAME@F with F in [0.001, 1) (T, G, S, D, C, K, N, R non-negative integers; NAME a "
    "graph edge as `racksim route` shows its ends)";

[[noreturn]] void bad(const std::string& text) { throw InputError("--fail", "", "'" + text + "'", kAccepted); }

[[noreturn]] void out_of_range(const FailureItem& item, const std::string& allowed) {
  throw InputError("--fail", "", "'" + item.text + "'", allowed);
}

int parse_index(const std::string& digits, const std::string& text) {
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) bad(text);
  return std::atoi(digits.c_str());
}

// "A.B" -> (A, B); `dot_required` false also accepts "B" alone (A = -1).
std::pair<int, int> parse_pair(const std::string& arg, const std::string& text, bool dot_required) {
  const auto dot = arg.find('.');
  if (dot == std::string::npos) {
    if (dot_required) bad(text);
    return {-1, parse_index(arg, text)};
  }
  return {parse_index(arg.substr(0, dot), text), parse_index(arg.substr(dot + 1), text)};
}

std::string range(int count) { return "[0, " + std::to_string(count - 1) + "]"; }

std::string system_label(const TopologyGraph& g) { return g.spec().id + " x" + g.spec().rack.count_label(g.racks()); }

std::string edge_list_text(const TopologyGraph& g) {
  std::string examples;
  for (const auto& e : g.edges()) {
    if (examples.size() > 160) break;
    if (!examples.empty()) examples += ", ";
    examples += e.name;
  }
  return "a graph edge name such as " + examples + ", ...";
}

}  // namespace

const char* to_string(PartitionMode mode) {
  return mode == PartitionMode::full_bandwidth ? "full-bandwidth" : "adaptive-bandwidth";
}

PartitionMode partition_mode_from_string(const std::string& text, const std::string& where) {
  if (text == "full-bandwidth" || text == "full") return PartitionMode::full_bandwidth;
  if (text == "adaptive-bandwidth" || text == "adaptive") return PartitionMode::adaptive_bandwidth;
  throw InputError(where, "", "'" + text + "'", "full-bandwidth (the default) or adaptive-bandwidth");
}

FailureItem parse_failure_item(const std::string& text) {
  using K = FailureItem::Kind;
  static const std::map<std::string, K> kinds = {
      {"tray", K::tray},       {"gpu", K::gpu},         {"switch-tray", K::switch_tray}, {"switch-chip", K::switch_chip},
      {"nvlink", K::nvlink},   {"trunk", K::trunk},     {"nic", K::nic},                 {"ib-link", K::ib_link},
      {"imex", K::imex},       {"link", K::link}};
  const auto colon = text.find(':');
  if (colon == std::string::npos) bad(text);
  const auto kind = kinds.find(text.substr(0, colon));
  if (kind == kinds.end()) bad(text);
  const std::string arg = text.substr(colon + 1);
  FailureItem item;
  item.text = text;
  item.kind = kind->second;
  switch (item.kind) {
    case K::tray:
    case K::gpu:
    case K::nic:
    case K::imex: item.index = parse_index(arg, text); break;
    case K::switch_tray: std::tie(item.domain, item.index) = parse_pair(arg, text, false); break;
    case K::switch_chip:
    case K::trunk:
    case K::ib_link: std::tie(item.domain, item.index) = parse_pair(arg, text, true); break;
    case K::nvlink: std::tie(item.index, item.chip) = parse_pair(arg, text, true); break;
    case K::link: {
      const auto at = arg.find('@');
      item.link_name = arg.substr(0, at);
      if (item.link_name.empty()) bad(text);
      if (at != std::string::npos) {
        const std::string f = arg.substr(at + 1);
        char* end = nullptr;
        const double value = std::strtod(f.c_str(), &end);
        // Below kMinLinkFraction a "degraded" link is a link down (1e-300 gave a 2.5e301 us answer, and a
        // denormal an internal error): say so instead of computing it.
        if (f.empty() || end != f.c_str() + f.size() || !std::isfinite(value) || value < kMinLinkFraction || value >= 1)
          bad(text);
        item.bandwidth_fraction = value;
      }
      break;
    }
  }
  return item;
}

void validate_failures(const FailureScenario& failures, const TopologyGraph& g) {
  using K = FailureItem::Kind;
  const auto& dom = g.spec().nvlink_domain;
  const int trays = g.racks() * g.spec().rack.trays;
  const int domains = g.fabric_count();
  const int nics = static_cast<int>(g.spec().tray.nics.size()) * trays;
  const int rails = static_cast<int>(g.spec().tray.nics.size());
  auto need_switches = [&](const FailureItem& item) {
    if (!dom) out_of_range(item, "no NVLink switch failures: " + g.spec().id + " has no NVLink switches");
  };
  for (const auto& item : failures.items) {
    switch (item.kind) {
      case K::tray:
      case K::imex:
        if (item.index >= trays)
          out_of_range(item, item.text.substr(0, item.text.find(':')) + ":T with T in " + range(trays) + " for " +
                                 system_label(g));
        break;
      case K::gpu:
        if (item.index >= g.gpu_count())
          out_of_range(item, "gpu:G with G in " + range(g.gpu_count()) + " for " + system_label(g));
        break;
      case K::nic:
        if (item.index >= nics)
          out_of_range(item, nics > 0 ? "nic:N with N in " + range(nics) + " for " + system_label(g)
                                      : "no NIC failures: " + g.spec().id + " has no NICs");
        break;
      case K::switch_tray:
      case K::switch_chip: {
        need_switches(item);
        const bool tray = item.kind == K::switch_tray;
        const int limit = tray ? dom->switch_trays : dom->switch_trays * dom->chips_per_switch_tray;
        if (item.domain >= domains || item.index >= limit)
          out_of_range(item, std::string(tray ? "switch-tray:S or switch-tray:D.S" : "switch-chip:D.C") + " with " +
                                 (tray ? "S" : "C") + " in " + range(limit) + " and D in " + range(domains));
        break;
      }
      case K::nvlink: {
        need_switches(item);
        const bool rack_scope = dom->gpu_links_scope == GpuLinksScope::rack;
        const int reached = dom->switch_trays * dom->chips_per_switch_tray / (rack_scope ? dom->racks : 1);
        if (item.index >= g.gpu_count() || item.chip >= reached)
          out_of_range(item, "nvlink:G.C with G in " + range(g.gpu_count()) + " and C in " + range(reached) +
                                 " (the switch chips a GPU's NVLinks reach)");
        break;
      }
      case K::trunk: {
        need_switches(item);
        if (dom->gpu_links_scope != GpuLinksScope::rack)
          out_of_range(item, "no trunk failures: " + g.spec().id + "'s NVLink domain has no switch-to-switch trunk "
                                                                   "(only multi-rack domains such as gb200-nvl36x2)");
        const int chips = dom->switch_trays * dom->chips_per_switch_tray / dom->racks;
        if (item.domain >= domains || item.index >= chips)
          out_of_range(item, "trunk:D.K with D in " + range(domains) + " and K in " + range(chips));
        break;
      }
      case K::ib_link:
        if (!g.spec().scale_out || rails == 0)
          out_of_range(item, "no ib-link failures: " + g.spec().id + " has no scale-out fabric");
        if (item.domain >= g.racks() || item.index >= rails)
          out_of_range(item, "ib-link:R.K with rack R in " + range(g.racks()) + " and rail K in " + range(rails));
        break;
      case K::link: {
        bool found = false;
        for (const auto& e : g.edges()) found = found || e.name == item.link_name;
        if (!found) out_of_range(item, edge_list_text(g));
        break;
      }
    }
  }
}

}  // namespace racksim
