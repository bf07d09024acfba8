#pragma once
// NVLink partitions: an NVLink domain split into smaller ones, each its own clique (IMEX/NCCL MNNVL
// domain). GPUs of different partitions of one rack cannot reach each other over NVLink (they talk
// through their NICs); GPUs in no partition have no NVLink at all. NVIDIA documents two member types
// (NMX-M "Partitions Management": GPU-ID-based and location-based, all GPUs of a partition inside one
// NVLink domain, a GPU in at most one partition) and ships NxT tray templates (BCM "NVLink SDN
// Partitioning": the Default Partition and e.g. "2x9 Nodes"); NVIDIA GB200 NVL Partition User Guide
// DU-12143-001 section 2.1 lists the partition types. Sources in docs/failures.md.
//
// A partitioning is applied to a TopologyGraph (TopologyGraph::apply_partitions): each GPU's `domain`
// becomes its partition's index (or -1), while `fabric` keeps the physical NVLink domain the switch chips
// belong to. Everything that groups GPUs by domain (routes, NVLS, hierarchical collectives, the analytic
// model, switch planes) then follows the partitions without knowing about them.
#include <string>
#include <vector>

namespace racksim {

class TopologyGraph;

struct NvlinkPartition {
  std::string name;
  int fabric = -1;          // physical NVLink domain holding it
  std::vector<int> gpus;    // global GPU indices, ascending
  std::vector<int> trays;   // global compute trays with at least one of its GPUs, ascending
};

struct NvlinkPartitioning {
  std::string spec;                         // as given: "default", "2x9", "a=trays:0-7;b=trays:8-15"
  std::vector<NvlinkPartition> partitions;  // index = the GPUs' new domain id
};

// Parses a partition spec for `graph` (its own physical domains; partitions already applied are
// ignored). Forms, InputError naming `where` and the forms otherwise:
//   default                        one partition per NVLink domain, every GPU in it (what ships)
//   NxT                            in every NVLink domain, N partitions of T consecutive compute trays from
//                                  the domain's first tray (2x9, 3x6, 18x1; 3x1 leaves trays 3.. unpartitioned)
//   NAME=SET[;NAME=SET...]         explicit; SET is trays:LIST or gpus:LIST with LIST like 0-7,9 (global
//                                  indices); names are letters, digits, '-', '_'
NvlinkPartitioning parse_partitions(const std::string& text, const TopologyGraph& graph,
                                    const std::string& where = "--partitions");

// The NxT presets that tile one NVLink domain of `graph` exactly ("1x18", "2x9", ... for an NVL72).
std::vector<std::string> partition_presets(const TopologyGraph& graph);

}  // namespace racksim
