#pragma once
// Access cost of data where it landed (seed course module 5, sections 2-5): the path from the device
// that reads it (a CPU node or a GPU) to the memory node holding it, its per-direction bandwidth and
// latency, and for GPU reads of system-allocated (malloc/mmap) memory the ATS translation cost with the
// CPU's base page size (4 KiB vs 64 KiB: TLB reach and misses). Vendor peaks from the topology,
// multiplied by TrayAssumptions::c2c_efficiency on C2C; every other constant is in TrayAssumptions.
// Plus the seed's tuning checklist (s5) with each setting's modelled effect.
#include <cstdint>
#include <string>
#include <vector>

#include "models/memory/tray_memory.hpp"

namespace racksim::memory {

struct PathCost {
  std::string accessor, node;     // tray-local ids: "gpu0" reading "cpu1"
  std::string path;               // "local HBM", "C2C to local Grace", "C2C + CPU-CPU", "NVLink to gpu2", ...
  std::vector<std::string> hops;  // each with its per-direction bandwidth
  double bandwidth_Bps = 0;       // per direction, this accessor streaming alone
  double shared_bandwidth_Bps = 0;  // per direction when every GPU sharing its C2C streams at once
  double latency_s = 0;
  bool via_ats = false;           // a GPU translating with the CPU's page tables (system-allocated memory)
  double page_bytes = 0;          // translation granule on this path
};

// `system_allocated`: the memory is pageable malloc/mmap (GPU reads go through ATS with CPU pages);
// otherwise the GPU maps it in its own page tables (cudaMalloc, pinned, managed, EGM: 2 MiB pages).
PathCost access_path(const TrayMemoryModel& tray, int accessor, int memory_node, bool system_allocated);

struct StreamCost {
  double transfer_s = 0;          // bytes / bandwidth
  double translation_s = 0;       // ATS/TLB misses: one per page streamed, overlapped ats_outstanding_misses deep
  double seconds = 0;             // transfer + translation
  double effective_Bps = 0;
  double tlb_reach_bytes = 0;     // gpu_tlb_entries x page size
  double misses = 0;
};
// Reading `bytes` once along `path` (translation counted only for GPU accessors).
StreamCost stream_cost(const TrayMemoryModel& tray, const PathCost& path, std::uint64_t bytes);

// init_on_alloc: seconds the kernel spends zeroing `bytes` of HBM for a cudaMalloc in NUMA mode (0 in
// CDMM, for PCIe GPUs, or with init_on_alloc=0).
double cuda_malloc_zeroing_s(const TrayMemoryModel& tray, std::uint64_t bytes);

struct ChecklistItem {
  std::string setting;            // "64 KiB kernel pages"
  std::string check;              // the command the seed gives
  std::string value;              // what this tray has
  std::string recommended;
  bool ok = false;
  std::string effect;             // the modelled effect, with numbers
  double number = 0;              // the headline number of the effect ...
  std::string unit;               // ... and its unit ("" when the effect is not quantified)
};
// The seed's checklist (s5), evaluated on this tray's mode and settings.
std::vector<ChecklistItem> tuning_checklist(const TrayMemoryModel& tray);

}  // namespace racksim::memory
