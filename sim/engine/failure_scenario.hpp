#pragma once
// Failures as input: what is down or degraded while a collective runs, and the partition mode that
// decides what a lost NVLink or switch does (docs/failures.md has each item's semantics and sources).
// Parsed from CLI --fail items:
//   tray:T            compute tray T (global index) is down (a reboot): its GPUs leave the NVLink domain
//   gpu:G             GPU G (global index) is down (an XID the driver cannot recover without a reset)
//   switch-tray:S     switch tray S of every NVLink domain (or "switch-tray:D.S" for domain D) is down
//   switch-chip:D.C   one NVSwitch chip of domain D
//   nvlink:G.C        GPU G's access link(s) to switch chip C of its domain
//   trunk:D.K         one of the switch-to-switch trunk links of chip K of a multi-rack domain (NVL36x2)
//   nic:N             NIC N (global index): NCCL reaches the network through a neighbour's NIC (PXN)
//   ib-link:R.K       one uplink cable of rack R's rail-K leaf switch
//   imex:T            the nvidia-imex daemon of compute tray T
//   link:NAME[@F]     the graph edge NAME (see `racksim route`) is down, or at fraction F of its bandwidth
#include <string>
#include <vector>

namespace racksim {

class TopologyGraph;

// How an NVLink partition reacts to lost NVLinks (NMX Manager "Partition Health"): full_bandwidth (the
// default) parks a GPU that lost NVLinks and makes the partition UNHEALTHY when a switch is lost;
// adaptive_bandwidth keeps every GPU running at the bandwidth its remaining links give.
enum class PartitionMode { full_bandwidth, adaptive_bandwidth };
const char* to_string(PartitionMode mode);  // "full-bandwidth", "adaptive-bandwidth"
// Accepts "full-bandwidth"/"full" and "adaptive-bandwidth"/"adaptive"; InputError naming `where` otherwise.
PartitionMode partition_mode_from_string(const std::string& text, const std::string& where = "--partition-mode");

struct FailureItem {
  enum class Kind { tray, gpu, switch_tray, switch_chip, nvlink, trunk, nic, ib_link, imex, link };
  Kind kind = Kind::tray;
  int domain = -1;            // NVLink domain (switch-tray D.S, switch-chip, trunk), rack (ib-link); -1: every domain
  int index = 0;              // tray / GPU / switch tray / chip / NIC / rail index
  int chip = -1;              // nvlink:G.C: the chip (index within the GPU's domain)
  std::string link_name;      // for Kind::link
  double bandwidth_fraction = 0.0;  // 0 = down; in [kMinLinkFraction, 1) = degraded (links only)
  std::string text;           // as given, for messages and the result's config echo
};

// The smallest degraded fraction link:NAME@F accepts: a PCIe x16 link trained down to Gen1 x1 keeps
// 1/128 of a Gen5 x16 (the widest real degradation we know of); anything slower is a link down.
inline constexpr double kMinLinkFraction = 1e-3;

struct FailureScenario {
  std::vector<FailureItem> items;
  PartitionMode mode = PartitionMode::full_bandwidth;
  bool empty() const { return items.empty(); }
};

// Parses one --fail item; InputError naming the item and the accepted forms otherwise.
FailureItem parse_failure_item(const std::string& text);

// Checks that every item names something in `graph` (ids in range, a trunk on a multi-rack domain, an
// existing link name); InputError naming the item and the valid range otherwise. Simulation and
// PlatformModel call it; commands that only build schedules (schedule dump) call it too.
void validate_failures(const FailureScenario& failures, const TopologyGraph& graph);

}  // namespace racksim
