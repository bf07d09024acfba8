// racksim place: where allocations land on one tray in NUMA mode or CDMM (models/memory).
#include <iostream>

#include "cli/commands.hpp"
#include "models/memory/placement_report.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::cli {

namespace {
struct PlaceOptions {
  std::string system, mode = "numa", tuning = "untuned", format;
  std::vector<std::string> allocs;
  std::optional<std::string> page_size, thp, init_on_alloc, numa_balancing, swap, os_reserved, c2c_shared,
      access_counter_migration, reader;
  std::optional<std::uint64_t> min_free_kbytes;
  std::optional<int> compaction, gpu_numa_first_id, gpu_numa_stride;
  bool no_checklist = false;
};

bool flag01(const std::optional<std::string>& v, bool fallback) { return v ? *v == "1" : fallback; }
}  // namespace

static void add_place_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<PlaceOptions>();
  auto* cmd = app.add_subcommand("place", "where allocations land on one tray (NUMA mode vs CDMM), what fails and why");
  cmd->add_option("--system", o->system, "system id (racksim systems) or topology JSON path")->required();
  cmd->add_option("--mode", o->mode, "coherent memory mode: numa (HBM onlined to the kernel) or cdmm (driver-managed)");
  cmd->add_option("--alloc", o->allocs,
                  "NAME:KIND:SIZE[:NODE_OR_POLICY], in order. KIND cpu|cuda|managed|pinned|egm; cpu takes cpuN, "
                  "local=cpuN, preferred=NODE, bind=NODE,.., interleave=NODE,..|all (+ @cpuN first touch); cuda "
                  "needs gpuN; managed gpuN|cpuN; pinned/egm cpuN");
  cmd->add_option("--tuning", o->tuning, "starting point for the OS settings: untuned (stock Ubuntu) or guide (NVIDIA Grace tuning guide)")
      ->check(CLI::IsMember({"untuned", "guide"}));
  cmd->add_option("--page-size", o->page_size, "kernel base page size: 4K or 64K (GPU TLB reach via ATS)");
  cmd->add_option("--thp", o->thp, "PMD-sized THP: never, madvise or always");
  cmd->add_option("--init-on-alloc", o->init_on_alloc, "kernel zeroes pages on allocation: 0 or 1")->check(CLI::IsMember({"0", "1"}));
  cmd->add_option("--numa-balancing", o->numa_balancing, "kernel.numa_balancing: 0 or 1")->check(CLI::IsMember({"0", "1"}));
  cmd->add_option("--swap", o->swap, "swap size, e.g. 200GB (0: none)");
  cmd->add_option("--min-free-kbytes", o->min_free_kbytes, "vm.min_free_kbytes (default: what the kernel computes)");
  cmd->add_option("--compaction-proactiveness", o->compaction, "vm.compaction_proactiveness (0-100)")->check(CLI::Range(0, 100));
  cmd->add_option("--os-reserved", o->os_reserved, "memory per CPU node held by the OS and other processes (assumption, default 8GB)");
  cmd->add_option("--c2c-shared", o->c2c_shared, "a superchip's two GPUs share one C2C: 1 (default, seed s4) or 0")->check(CLI::IsMember({"0", "1"}));
  cmd->add_option("--access-counter-migration", o->access_counter_migration, "assume hot malloc'd pages migrate to HBM in NUMA mode: 0 or 1")
      ->check(CLI::IsMember({"0", "1"}));
  cmd->add_option("--gpu-numa-first-id", o->gpu_numa_first_id, "NUMA id of gpu0's node (default: after the CPU nodes)")->check(non_negative_number(true));
  cmd->add_option("--gpu-numa-stride", o->gpu_numa_stride, "NUMA ids between GPU nodes (GH200-style MIG placeholders: 8)")->check(positive_number(true));
  cmd->add_option("--reader", o->reader, "report every allocation's access cost as read by this device (gpuN, cpuN)");
  cmd->add_flag("--no-checklist", o->no_checklist, "leave the tuning checklist out");
  add_format_option(*cmd, o->format, "text", {"text", "json"});
  cmd->callback([&global, o] {
    using namespace racksim::memory;
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(o->system);
    const MemoryMode mode = memory_mode_from_string(o->mode, "--mode");
    const TrayMemoryModel probe(spec, mode, TuningSettings::untuned(), TrayAssumptions{});
    TuningSettings t = o->tuning == "guide" ? TuningSettings::guide(probe.gpu_memory_bytes()) : TuningSettings::untuned();
    if (o->page_size) {
      const std::uint64_t p = units::parse_bytes(*o->page_size, "--page-size");
      if (p != 4096 && p != 65536) throw InputError("--page-size", "", "'" + *o->page_size + "'", "4K or 64K");
      t.page_size_bytes = p;
    }
    if (o->thp) t.thp_pmd = thp_from_string(*o->thp, "--thp");
    t.init_on_alloc = flag01(o->init_on_alloc, t.init_on_alloc);
    t.numa_balancing = flag01(o->numa_balancing, t.numa_balancing);
    if (o->swap) t.swap_bytes = *o->swap == "0" ? 0 : units::parse_bytes(*o->swap, "--swap");
    if (o->min_free_kbytes) {
      // The kernel holds it in an int (mm/page_alloc.c: `int min_free_kbytes`, sysctl minimum 0).
      constexpr std::uint64_t kMaxMinFreeKbytes = 2147483647;
      if (*o->min_free_kbytes > kMaxMinFreeKbytes)
        throw InputError("--min-free-kbytes", "", std::to_string(*o->min_free_kbytes),
                         "0 to 2147483647 (vm.min_free_kbytes is an int)");
      t.min_free_kbytes = *o->min_free_kbytes;
    }
    if (o->compaction) t.compaction_proactiveness = *o->compaction;
    TrayAssumptions a;
    if (o->os_reserved) a.os_reserved_GB_per_cpu_node = static_cast<double>(*o->os_reserved == "0" ? 0 : units::parse_bytes(*o->os_reserved, "--os-reserved")) / units::kGB;
    a.c2c_shared = flag01(o->c2c_shared, a.c2c_shared);
    a.access_counter_migration = flag01(o->access_counter_migration, a.access_counter_migration);
    if (o->gpu_numa_first_id) a.gpu_numa_first_id = *o->gpu_numa_first_id;
    if (o->gpu_numa_stride) a.gpu_numa_stride = *o->gpu_numa_stride;
    const TrayMemoryModel tray(spec, mode, t, a);
    std::vector<AllocationRequest> requests;
    for (const auto& text : o->allocs) requests.push_back(parse_allocation(text, tray, "--alloc"));
    ReportOptions ro;
    ro.checklist = !o->no_checklist;
    if (o->reader) {
      ro.reader = tray.find_node(*o->reader);
      if (ro.reader < 0) throw InputError("--reader", "", "'" + *o->reader + "'", tray.node_names());
    }
    const PlacementResult result = place_allocations(tray, requests);
    std::cout << (o->format == "json" ? placement_to_json_text(tray, result, ro) : placement_to_text(tray, result, ro));
  });
}

RACKSIM_REGISTER_COMMAND("place", add_place_command);

}  // namespace racksim::cli
