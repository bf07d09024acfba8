#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/units.hpp"

namespace racksim::cli {

namespace {
struct ShowOptions {
  std::string system, format;
  std::optional<int> racks;  // unset: the system's default
};
}  // namespace

static void add_show_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ShowOptions>();
  auto* cmd = app.add_subcommand("show", "counts and aggregates of a system, computed from its graph");
  cmd->add_option("system", opts->system, "system id (racksim systems) or path to a topology JSON file")->required();
  cmd->add_option("--racks", opts->racks, "number of racks (default: the system's default)");
  add_format_option(*cmd, opts->format, "text", {"text", "json"});
  cmd->callback([&global, opts] {
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(opts->system);
    const int racks = racks_or_default(opts->racks, spec);
    const TopologyGraph graph(spec, racks);
    const TopologySummary s = graph.summary();
    // HBM per GPU both ways (issue 16): NVIDIA's figure, and the bytes the driver reports, which is what
    // memory fit and placement use.
    const GpuType& gpu = spec.gpu_types.front();
    if (opts->format == "json") {
      nlohmann::json j{{"system", spec.id},
                       {"racks", s.racks},
                       {"gpus", s.gpus},
                       {"cpus", s.cpus},
                       {"trays", s.trays},
                       {"switch_trays", s.switch_trays},
                       {"switch_chips", s.switch_chips},
                       {"gpu_nvlinks", s.gpu_nvlinks},
                       {"nics", s.nics},
                       {"nvlink_domains", s.nvlink_domains},
                       {"gpus_per_nvlink_domain", s.gpus_per_domain},
                       {"nvlink_aggregate_TBps", round_significant(s.nvlink_aggregate_TBps)},
                       {"hbm_per_gpu_marketed_GB", gpu.hbm_marketed_GB},
                       {"hbm_per_gpu_bytes", gpu.hbm_capacity_bytes},
                       {"hbm_total_TB", round_significant(s.hbm_total_TB)},
                       {"lpddr_total_TB", round_significant(s.lpddr_total_TB)},
                       {"host_memory_total_TB", round_significant(s.host_memory_total_TB)}};
      std::cout << dump_json(j, 2) << "\n";
      return;
    }
    std::cout << fmt::format("{} x{}: {}\n", spec.id, spec.rack.count_label(s.racks), spec.description);
    auto row = [](const std::string& name, const std::string& value) {
      std::cout << fmt::format("  {:<26}{}\n", name, value);
    };
    row("GPUs", std::to_string(s.gpus));
    row("CPUs", std::to_string(s.cpus));
    row("compute trays", std::to_string(s.trays));
    row("NVLink switch trays", std::to_string(s.switch_trays));
    row("NVLink switch chips", std::to_string(s.switch_chips));
    row("GPU NVLinks", std::to_string(s.gpu_nvlinks));
    row("NVLink domains", fmt::format("{} of {} GPUs", s.nvlink_domains, s.gpus_per_domain));
    row("NICs", std::to_string(s.nics));
    row("NVLink aggregate", fmt::format("{:.1f} TB/s (both directions)", s.nvlink_aggregate_TBps));
    row("HBM per GPU", fmt::format("{:g} GB as NVIDIA quotes it; {} B = {:.2f} GiB as the driver reports{}",
                                   gpu.hbm_marketed_GB, gpu.hbm_capacity_bytes,
                                   static_cast<double>(gpu.hbm_capacity_bytes) / units::kGiB,
                                   gpu.integrated ? " (shared with the CPU)" : ""));
    row("HBM total", fmt::format("{:.2f} TB", s.hbm_total_TB));
    row("LPDDR total", fmt::format("{:.2f} TB", s.lpddr_total_TB));
    row("host memory total", fmt::format("{:.2f} TB", s.host_memory_total_TB));
    if (spec.scale_out) {
      row("scale-out", spec.scale_out->fabric);
      const auto& t = spec.scale_out->transport;
      row("network steps", t ? describe(*t) : std::string("InfiniBand/RoCE verbs: NCCL's own figures (hwLat[NET], tuning.cc)"));
    }
  });
}

RACKSIM_REGISTER_COMMAND("show", add_show_command);

}  // namespace racksim::cli
