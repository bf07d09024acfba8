// racksim fig4: the course's Fig 4 all-reduce model (seed course section 7: bandwidth only, vendor peaks,
// a fixed latency per phase) on a system, for one size or a sweep of sizes; the same numbers as
// racksim.fig4() in Python. The "course model" layer of the page `racksim serve` serves.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/collective_options.hpp"
#include "models/analytic/fig4_system.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::cli {

namespace {

struct Fig4CliOptions {
  std::string system, format, bytes, min_bytes, max_bytes;
  std::optional<int> racks;
  int gpus = 0;
  double step_factor = 2;
  Fig4Options model;
};

nlohmann::ordered_json to_json(const TopologyGraph& graph, const Fig4Result& r, double efficiency) {
  const Fig4Inputs& in = r.inputs;
  const double algbw_Bps = r.time_s > 0 ? in.bytes / r.time_s : 0.0;
  return {{"model", "fig4"},
          {"system", graph.spec().id},
          {"racks", graph.racks()},
          {"op", "all_reduce"},
          {"algo", in.nvls ? "nvls" : "ring"},
          {"gpus", r.gpus},
          {"bytes", static_cast<std::uint64_t>(in.bytes)},
          {"gpus_per_domain", in.gpus_per_domain},
          {"domains", in.domains},
          {"nvlink_GBps", round_significant(units::Bps_to_GBps(in.nvlink_Bps))},
          {"nic_GBps", round_significant(units::Bps_to_GBps(in.nic_Bps))},
          {"efficiency", efficiency},
          {"phase_latency_us", round_significant(units::s_to_us(in.phase_latency_s))},
          {"time_us", round_significant(units::s_to_us(r.time_s))},
          {"algbw_GBps", round_significant(units::Bps_to_GBps(algbw_Bps))},
          {"busbw_GBps", round_significant(units::Bps_to_GBps(algbw_Bps * busbw_factor(CollectiveOp::all_reduce, r.gpus)))}};
}

}  // namespace

static void add_fig4_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<Fig4CliOptions>();
  auto* cmd = app.add_subcommand("fig4", "the course's Fig 4 all-reduce model (bandwidth only, fixed latency per phase) on a system");
  cmd->add_option("--system", o->system, "system id (racksim systems) or path to a topology JSON file")->required();
  cmd->add_option("--racks", o->racks, "number of racks (default: the system's default, or the fewest that hold --gpus)");
  cmd->add_option("--gpus", o->gpus, "ranks, placed in order over the trays as in collective")->required();
  auto* bytes = cmd->add_option("--bytes", o->bytes, "one size per rank: 1G, 512M, 64K or a number of bytes");
  auto* min = cmd->add_option("--min-bytes,-b", o->min_bytes, "a sweep of sizes from this one (with --max-bytes)");
  auto* max = cmd->add_option("--max-bytes,-e", o->max_bytes, "largest size of the sweep");
  auto* step = cmd->add_option("--step-factor,-f", o->step_factor, "size multiplier between sweep rows (default 2)");
  bytes->excludes(min)->excludes(max)->excludes(step);  // a step with one size was ignored without a word
  min->needs(max);
  max->needs(min);
  cmd->add_flag("--nvls", o->model.nvls, "NVLS inside each NVLink domain (S / B_nvl) instead of a ring (2(d-1)/d S / B_nvl)");
  cmd->add_option("--phase-latency-us", o->model.phase_latency_us,
                  "the course's fixed latency per phase, microseconds (default 5: an assumption, the course gives none)");
  cmd->add_option("--nvlink-GBps", o->model.nvlink_GBps, "per-direction NVLink bandwidth of one GPU (default: the topology's)");
  cmd->add_option("--nic-GBps", o->model.nic_GBps, "per-direction bandwidth of one GPU's NIC (default: the topology's)");
  cmd->add_option("--efficiency", o->model.efficiency, "fraction of the vendor peaks reached, (0, 1] (the course: NCCL ~0.7-0.9)");
  add_format_option(*cmd, o->format, "json", {"json", "table"});
  cmd->callback([&global, o] {
    if (o->bytes.empty() && o->min_bytes.empty())
      throw InputError("--bytes", "", "(none)", "one size (--bytes 1G) or a sweep (--min-bytes 1K --max-bytes 1G)");
    std::vector<std::uint64_t> sizes;
    if (!o->bytes.empty()) sizes.push_back(parse_size_option(o->bytes, "--bytes"));
    else sizes = sweep_sizes(parse_size_option(o->min_bytes, "--min-bytes"), parse_size_option(o->max_bytes, "--max-bytes"),
                             o->step_factor);
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(o->system);
    const TopologyGraph graph(spec, racks_for_gpus(o->racks, spec, o->gpus));  // as racksim collective
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (std::uint64_t size : sizes) rows.push_back(to_json(graph, fig4_on_system(graph, o->gpus, size, o->model), o->model.efficiency));
    if (o->format == "json") {
      std::cout << dump_json((o->bytes.empty() ? rows : rows[0]), 2) << "\n";
      return;
    }
    const auto& first = rows[0];
    std::cout << fmt::format("{} x{}: course Fig 4 model, all_reduce {} on {} GPUs ({} domain(s) x {}), NVLink {} GB/s, "
                             "NIC {} GB/s, efficiency {}, {} us per phase\n",
                             spec.id, spec.rack.count_label(graph.racks()), first["algo"].get<std::string>(), o->gpus, first["domains"].get<int>(),
                             first["gpus_per_domain"].get<int>(), first["nvlink_GBps"].get<double>(),
                             first["nic_GBps"].get<double>(), o->model.efficiency, first["phase_latency_us"].get<double>());
    std::cout << fmt::format("{:>14} {:>14} {:>10} {:>10}\n", "size (B)", "time (us)", "algbw GB/s", "busbw GB/s");
    for (const auto& r : rows)
      std::cout << fmt::format("{:>14} {:>14.3f} {:>10.2f} {:>10.2f}\n", r["bytes"].get<std::uint64_t>(), r["time_us"].get<double>(),
                               r["algbw_GBps"].get<double>(), r["busbw_GBps"].get<double>());
  });
}

RACKSIM_REGISTER_COMMAND("fig4", add_fig4_command);

}  // namespace racksim::cli
