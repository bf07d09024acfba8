#pragma once
// Failures as input: what is down or degraded while a collective runs. Parsed from CLI --fail items:
//   tray:T            compute tray T (global index) is down: its GPUs leave the NVLink domain
//   switch-tray:S     switch tray S of every NVLink domain (or "switch-tray:D.S" for domain D) is down
//   switch-chip:D.C   one NVSwitch chip of domain D
//   nic:N             NIC N (global index)
//   link:NAME[@F]     the graph edge NAME (see `racksim route`) is down, or at fraction F of its bandwidth
#include <string>
#include <vector>

namespace racksim {

struct FailureItem {
  enum class Kind { tray, switch_tray, switch_chip, nic, link };
  Kind kind = Kind::tray;
  int domain = -1;            // -1: every domain (switch-tray without D.)
  int index = 0;              // tray / switch tray / chip / NIC index
  std::string link_name;      // for Kind::link
  double bandwidth_fraction = 0.0;  // 0 = down; in (0,1) = degraded (links only)
  std::string text;           // as given, for messages and the result's config echo
};

struct FailureScenario {
  std::vector<FailureItem> items;
  bool empty() const { return items.empty(); }
};

// Parses one --fail item; InputError naming the item and the accepted forms otherwise.
FailureItem parse_failure_item(const std::string& text);

}  // namespace racksim
