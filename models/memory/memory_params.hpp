#pragma once
// Inputs of the tray memory model that are not in the topology file: the coherent memory mode, the
// seed's Grace OS tuning checklist (course module 5, section 5) and the tray facts the seed marks
// "needs a real tray to confirm" (sections 2-4), each an explicit parameter with its assumption.
// docs/memory.md lists which behaviour is NVIDIA-documented and which is assumed.
#include <cstdint>
#include <optional>
#include <string>

namespace racksim::memory {

// NUMA mode: the driver onlines each GPU's HBM to the kernel as a memory-only NUMA node.
// CDMM (driver R580+): the driver keeps HBM; the GPU NUMA nodes exist but are empty (seed s3).
enum class MemoryMode { numa, cdmm };
const char* to_string(MemoryMode mode);
// "numa" or "cdmm" (also "driver", /proc/driver/nvidia/params' word for CDMM); InputError naming `where`.
MemoryMode memory_mode_from_string(const std::string& text, const std::string& where);

// PMD-sized transparent huge pages (2 MiB on a 4 KiB kernel, 512 MiB on a 64 KiB kernel).
enum class ThpSetting { never, madvise, always };
const char* to_string(ThpSetting thp);
ThpSetting thp_from_string(const std::string& text, const std::string& where);

// The seed's tuning checklist (s5) as inputs. CDMM is the mode above; the rest are here.
struct TuningSettings {
  std::uint64_t page_size_bytes = 4096;       // getconf PAGESIZE: 4096 or 65536
  ThpSetting thp_pmd = ThpSetting::madvise;   // /sys/kernel/mm/transparent_hugepage/enabled
  bool mthp_2m = false;                       // 2 MiB mTHP on a 64 KiB kernel (Linux 6.9+)
  bool init_on_alloc = true;                  // Ubuntu's generic kernel: 1 (seed s5, self-check 3)
  bool numa_balancing = true;                 // kernel.numa_balancing
  int compaction_proactiveness = 20;          // vm.compaction_proactiveness (kernel default 20)
  std::uint64_t swap_bytes = 0;               // swapon --show total; 0: no swap
  std::optional<std::uint64_t> min_free_kbytes;  // vm.min_free_kbytes; unset: what the kernel computes
  bool iommu_passthrough = false;             // iommu.passthrough=1 on the kernel command line
  bool cpufreq_performance = false;           // cpufreq governor "performance"

  // A stock Ubuntu generic arm64 install: 4 KiB pages, THP madvise, init_on_alloc=1, numa_balancing=1
  // (the settings the seed's drill warns about, s5 "Expected output").
  static TuningSettings untuned();
  // NVIDIA's Grace tuning guide as the seed summarises it (s5): 64 KiB pages, 512 MiB THP never with
  // 2 MiB mTHP, init_on_alloc=0, numa_balancing=0, proactive compaction off, iommu passthrough,
  // performance governor; swap of 1/4 of the tray's GPU memory (lower end of the guide's 1/4-1/2).
  static TuningSettings guide(std::uint64_t tray_gpu_memory_bytes);
};

// Tray facts that public documentation does not give (seed s2-s4). Defaults are racksim assumptions.
struct TrayAssumptions {
  // Memory of each CPU node held by the kernel, system services and other processes (grey in Fig 2).
  double os_reserved_GB_per_cpu_node = 8;
  // HBM the driver keeps for itself per GPU, beyond the topology's hbm_capacity_bytes (nvidia-smi's
  // Total). 0: Total is taken as what software sees (seed s2); our H200 shows 616 MiB of it Reserved
  // (cudaMemGetInfo's total is 0.4 % below nvidia-smi's), a figure not public for the other GPUs.
  double gpu_driver_reserved_GB = 0;
  // Whether a superchip's two GPUs share one NVLink-C2C (seed s4: "assume shared until the drill says
  // otherwise"); false gives each GPU the full per-direction C2C bandwidth.
  bool c2c_shared = true;
  // NUMA ids: CPU nodes are 0..C-1; GPU g gets gpu_numa_first_id + g * gpu_numa_stride. -1: C (right
  // after the CPU nodes). GH200 used 1 for the GPU and 2-9 for MIG placeholders (seed s2); GB200's ids
  // are not public (seed s2).
  int gpu_numa_first_id = -1;
  int gpu_numa_stride = 1;
  // ACPI SLIT node distances (numactl -H). Not public for GB200 (seed s2). Only the order matters for
  // placement: the seed's self-check 1 (both Grace nodes fill before HBM) needs cpu-cpu < cpu-gpu.
  int distance_local = 10;           // ACPI convention
  int distance_cpu_cpu = 40;         // assumption
  int distance_cpu_own_gpu = 80;     // assumption (CPU to a GPU on its own C2C)
  int distance_cpu_other_gpu = 120;  // assumption (CPU to the other superchip's GPU)
  int distance_gpu_gpu = 120;        // assumption (memory-only node to memory-only node)
  // Access-counter migration of system-allocated pages to HBM (NUMA mode only; seed s3: "possible,
  // not guaranteed", a driver implementation detail). Reported, never relied on for placement.
  bool access_counter_migration = false;
  // Node 0 carries a DMA zone besides its Normal zone (as GH200's node 0 does); counts in khugepaged's
  // min_free_kbytes formula.
  bool dma_zone_on_node0 = true;
  // Access-cost parameters, all assumptions (no public figure):
  int gpu_tlb_entries = 2048;                // GPU translation entries covering one stream
  double gpu_page_size_bytes = 2.0 * 1024 * 1024;  // GPU page tables (cudaMalloc, pinned, EGM): 2 MiB
  double ats_miss_latency_us = 2.0;          // one ATS translation: C2C round trip + SMMU walk
  int ats_outstanding_misses = 64;           // translations the GPU overlaps
  double kernel_zeroing_GBps = 20;           // init_on_alloc: one CPU thread zeroing HBM over C2C
  double lpddr_latency_us = 0.12;            // CPU load to local LPDDR5X
  double hbm_latency_us = 0.6;               // GPU load to local HBM
  double c2c_efficiency = 1.0;               // achieved / vendor peak on C2C (1: the seed's arithmetic)
  double numa_balancing_scan_MB = 256;       // kernel.numa_balancing_scan_size_mb (kernel default)
  double numa_balancing_period_s = 1.0;      // kernel.numa_balancing_scan_period_min_ms = 1000
  double hint_fault_us = 20;                 // one NUMA hinting fault taken by GPU access (assumption)
};

}  // namespace racksim::memory
