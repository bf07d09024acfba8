#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/core/json_reader.hpp"

namespace racksim::cli {

namespace {
struct RouteOptions {
  std::string system, src, dst, format;
  std::optional<int> racks;
};

int resolve(const TopologyGraph& graph, const std::string& name, const char* which) {
  const int v = graph.find_vertex(name);
  if (v >= 0) return v;
  throw InputError(which, "", "'" + name + "'",
                   "gpuN (0.." + std::to_string(graph.gpu_count() - 1) + "), cpuN, nicN or a device name such as " +
                       graph.vertices()[graph.gpu_vertex(0)].name);
}
}  // namespace

static void add_route_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<RouteOptions>();
  auto* cmd = app.add_subcommand("route", "the path between two devices, hop by hop, with each link's kind and bandwidth");
  cmd->add_option("system", opts->system, "system id or path to a topology JSON file")->required();
  cmd->add_option("src", opts->src, "source device: gpuN, cpuN, nicN or a name like r0.t3.gpu1")->required();
  cmd->add_option("dst", opts->dst, "destination device")->required();
  cmd->add_option("--racks", opts->racks, "number of racks (default: the system's default)");
  add_format_option(*cmd, opts->format, "text", {"text", "json"});
  cmd->callback([&global, opts] {
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(opts->system);
    const TopologyGraph graph(spec, racks_or_default(opts->racks, spec));
    const int src = resolve(graph, opts->src, "src"), dst = resolve(graph, opts->dst, "dst");
    if (src == dst)  // a path of no hops has no bottleneck to report (it printed "0.0 GB/s")
      throw InputError("dst", "", "'" + opts->dst + "' (the source itself)", "a device other than the source");
    const Route route = find_route(graph, src, dst);
    if (opts->format == "json") {
      nlohmann::json hops = nlohmann::json::array();
      for (const auto& h : route.hops)
        hops.push_back({{"from", h.from_name}, {"to", h.to_name}, {"kind", to_string(h.kind)}, {"links", h.links},
                        {"bandwidth_GBps", round_significant(units::Bps_to_GBps(h.bandwidth_Bps))},
                        {"latency_us", round_significant(units::s_to_us(h.latency_s))}});
      nlohmann::json j{{"system", spec.id}, {"racks", graph.racks()},
                       {"src", graph.vertices()[route.src].name}, {"dst", graph.vertices()[route.dst].name},
                       {"hops", hops},
                       {"bottleneck_GBps", round_significant(units::Bps_to_GBps(route.bottleneck_Bps))},
                       {"latency_us", round_significant(units::s_to_us(route.latency_s))}};
      std::cout << dump_json(j, 2) << "\n";
      return;
    }
    std::cout << fmt::format("{} -> {} on {} x{}: {} hop(s), bottleneck {:.1f} GB/s per direction, latency {:.2f} us\n",
                             graph.vertices()[route.src].name, graph.vertices()[route.dst].name, spec.id,
                             spec.rack.count_label(graph.racks()), route.hops.size(), units::Bps_to_GBps(route.bottleneck_Bps),
                             units::s_to_us(route.latency_s));
    for (const auto& h : route.hops)
      std::cout << fmt::format("  {:<22} -> {:<22} {:<8} x{:<3} {:>8.1f} GB/s  {:.2f} us\n", h.from_name, h.to_name,
                               to_string(h.kind), h.links, units::Bps_to_GBps(h.bandwidth_Bps), units::s_to_us(h.latency_s));
  });
}

RACKSIM_REGISTER_COMMAND("route", add_route_command);

}  // namespace racksim::cli
