#pragma once
// A placement as JSON (the `racksim place --format json` contract, also what notebooks read) and as
// text. Byte counts are integers; derived doubles are rounded to 6 significant digits so the output is
// byte-identical across runs and platforms.
#include <string>

#include "models/memory/placement.hpp"

namespace racksim::memory {

struct ReportOptions {
  int reader = -1;          // node index of the device whose access cost is reported; -1: per allocation,
                            // its own device (cpu: the touching CPU; cuda/managed: the first-touch
                            // device; pinned/egm: the first GPU attached to that CPU)
  bool checklist = true;    // include the tuning checklist
};

// Keys: system, tray, mode, coherent, notes, min_free_bytes, min_free_source, fallback_order, nodes
// [{id, numa_id, kind, memory, kernel_visible, capacity_bytes, os_reserved_bytes, driver_reserved_bytes,
// watermark_bytes, used_bytes, free_bytes, kernel_pages_bytes, by_allocation, and for GPUs
// nvidia_smi_used_bytes / nvidia_smi_free_bytes}], allocations [{name, kind, request, description,
// requested_bytes, placed {node: bytes}, failed, outcome, reason, swapped_bytes, spilled_to_gpu_bytes,
// off_target_bytes, swap_needed_bytes, reclaimed_bytes, evicted_to_host_bytes, cgroup_charged_bytes,
// init_on_alloc_zeroing_s, access}], swap, kubernetes, tuning, assumptions, checklist.
std::string placement_to_json_text(const TrayMemoryModel& tray, const PlacementResult& result,
                                   const ReportOptions& options = {});
std::string placement_to_text(const TrayMemoryModel& tray, const PlacementResult& result,
                              const ReportOptions& options = {});

// The device whose access cost is reported for an allocation (see ReportOptions::reader).
int default_reader(const TrayMemoryModel& tray, const AllocationRequest& request);

}  // namespace racksim::memory
