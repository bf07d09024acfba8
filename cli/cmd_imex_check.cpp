// racksim imex-check: can a job use multi-node NVLink (MNNVL), and what happens if not (models/fabric).
#include <iostream>

#include "cli/commands.hpp"
#include "models/fabric/imex_report.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::cli {

namespace {
struct ImexOptions {
  std::string system, format, nccl_version = "2.28.9", host_channels = "0", container_channels = "0", bytes = "1G", calibration = "default";
  std::optional<int> racks;
  std::optional<std::string> trays, gpus, imex_stopped, imex_not_installed, trays_down, share;
  std::vector<std::string> imex_domains, partitions, fabric_states;
  int mnnvl_enable = 2, channel = 0;
  bool p2p_disable = false, all_gpus = false;
};

// Channels are the minor numbers of /dev/nvidia-caps-imex-channels/channelN: Linux minor numbers have 20
// bits (MINORBITS in include/linux/kdev_t.h), so 0..1048575 is every channel a host can have.
constexpr int kImexChannelMinors = 1 << 20;

std::set<int> channel_set(const std::string& text, const std::string& where) {
  std::set<int> out;
  if (text == "none") return out;
  const std::vector<int> list = fabric::parse_index_list(text, kImexChannelMinors, where);
  out.insert(list.begin(), list.end());
  return out;
}
}  // namespace

static void add_imex_check_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<ImexOptions>();
  auto* cmd = app.add_subcommand("imex-check", "IMEX domain, channels, fabric state and cliques: can a job use multi-node NVLink?");
  cmd->add_option("--system", o->system, "system id or topology JSON path")->required();
  cmd->add_option("--racks", o->racks, "number of racks (default: the system's default)");
  cmd->add_option("--trays", o->trays, "the job: every GPU of these trays, e.g. 0-3 (global tray indices)");
  cmd->add_option("--gpus", o->gpus, "the job: these global GPU indices, e.g. 0-15 (instead of --trays)");
  cmd->add_option("--imex-domain", o->imex_domains, "trays one nodes_config.cfg lists (repeat per IMEX domain; default: one per NVLink domain)");
  cmd->add_option("--imex-stopped", o->imex_stopped, "trays where nvidia-imex is not running");
  cmd->add_option("--imex-not-installed", o->imex_not_installed, "trays without the nvidia-imex service");
  cmd->add_option("--host-channels", o->host_channels, "IMEX channels created on the hosts (list or none; default 0)");
  cmd->add_option("--container-channels", o->container_channels, "channels passed into the job's containers (list, none, or host = not containerised; default 0)");
  cmd->add_option("--channel", o->channel, "the IMEX channel the job opens (default 0)");
  cmd->add_option("--fabric-state", o->fabric_states, "GPU fabric state overrides GPUS:STATE, e.g. 4-7:in_progress (completed, in_progress, not_started, failed)");
  cmd->add_option("--partition", o->partitions, "trays of one NVL72 partition (own clique id); repeat per partition");
  cmd->add_option("--trays-down", o->trays_down, "trays that are down (rebooting, failed)");
  cmd->add_option("--nccl-version", o->nccl_version, "NCCL version (MNNVL from 2.25.2, fatal MNNVL init errors from 2.27; default 2.28.9)");
  cmd->add_option("--nccl-mnnvl-enable", o->mnnvl_enable, "NCCL_MNNVL_ENABLE: 0, 1 or 2 (auto, default)")->check(CLI::Range(0, 2));
  cmd->add_flag("--nccl-p2p-disable", o->p2p_disable, "NCCL_P2P_DISABLE=1 (implies NCCL_MNNVL_ENABLE=0)");
  cmd->add_option("--bytes", o->bytes, "all_reduce size per rank for the bandwidth estimate (default 1G)");
  cmd->add_option("--calibration", o->calibration, "calibration for the analytic estimates: default, none or a JSON path");
  cmd->add_option("--share", o->share, "also share a buffer EXPORTER:IMPORTER[:auto|process|fd|fabric] (global GPU indices; process: one process drives both)");
  cmd->add_flag("--all-gpus", o->all_gpus, "list every GPU's fabric state, not only the job's");
  add_format_option(*cmd, o->format, "text", {"text", "json"});
  cmd->callback([&global, o] {
    using namespace racksim::fabric;
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(o->system);
    const TopologyGraph graph(spec, racks_or_default(o->racks, spec));
    const int trays = graph.gpus_per_tray() > 0 ? graph.gpu_count() / graph.gpus_per_tray() : 0;
    FabricInputs in;
    for (const auto& d : o->imex_domains) in.imex_domains.push_back(parse_index_list(d, trays, "--imex-domain"));
    for (const auto& p : o->partitions) in.partitions.push_back(parse_index_list(p, trays, "--partition"));
    if (o->imex_stopped)
      for (int t : parse_index_list(*o->imex_stopped, trays, "--imex-stopped")) in.imex_service[t] = ImexService::stopped;
    if (o->imex_not_installed)
      for (int t : parse_index_list(*o->imex_not_installed, trays, "--imex-not-installed")) in.imex_service[t] = ImexService::not_installed;
    if (o->trays_down)
      for (int t : parse_index_list(*o->trays_down, trays, "--trays-down")) in.trays_down.insert(t);
    in.host_channels = channel_set(o->host_channels, "--host-channels");
    if (o->container_channels == "host") in.container_channels.reset();
    else in.container_channels = channel_set(o->container_channels, "--container-channels");
    for (const auto& fs : o->fabric_states) {
      const auto colon = fs.rfind(':');
      if (colon == std::string::npos) throw InputError("--fabric-state", "", "'" + fs + "'", "GPUS:STATE such as 4-7:in_progress");
      const FabricState st = fabric_state_from_string(fs.substr(colon + 1), "--fabric-state");
      for (int g : parse_index_list(fs.substr(0, colon), graph.gpu_count(), "--fabric-state")) in.gpu_fabric[g] = st;
    }
    JobRequest job;
    if (o->trays && o->gpus) throw InputError("--trays/--gpus", "", "both", "one of --trays or --gpus");
    if (o->gpus) job.gpus = parse_index_list(*o->gpus, graph.gpu_count(), "--gpus");
    else if (o->trays)
      for (int t : parse_index_list(*o->trays, trays, "--trays"))
        for (int i = 0; i < graph.gpus_per_tray(); ++i) job.gpus.push_back(t * graph.gpus_per_tray() + i);
    else throw InputError("--trays/--gpus", "", "(none)", "the job's trays (--trays 0-3) or GPUs (--gpus 0-15)");
    job.nccl.version = o->nccl_version;
    job.nccl.mnnvl_enable = o->mnnvl_enable;
    job.nccl.p2p_disable = o->p2p_disable;
    job.channel = o->channel;
    job.bytes = units::parse_bytes(o->bytes, "--bytes");
    job.calibration = o->calibration;
    ImexReport r;
    r.system = spec.id;
    r.racks = graph.racks();
    r.rack_unit = spec.rack.unit;
    r.job = job;
    r.verdict = check_job(graph, in, job);
    const ResolvedFabric rf = resolve_fabric(graph, in);
    r.imex_domains = rf.imex_domains;
    r.partitions = rf.partitions;
    const auto all = gpu_fabric_info(graph, in);
    if (o->all_gpus) r.gpus = all;
    else
      for (int g : job.gpus) r.gpus.push_back(all[g]);
    if (o->share) {
      const std::string& s = *o->share;
      const auto c1 = s.find(':');
      if (c1 == std::string::npos) throw InputError("--share", "", "'" + s + "'", "EXPORTER:IMPORTER[:auto|fd|fabric] such as 0:8:fabric");
      const auto c2 = s.find(':', c1 + 1);
      const auto e = parse_index_list(s.substr(0, c1), graph.gpu_count(), "--share");
      const auto i = parse_index_list(s.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1), graph.gpu_count(), "--share");
      if (e.size() != 1 || i.size() != 1) throw InputError("--share", "", "'" + s + "'", "one exporter and one importer GPU");
      const HandleType h = handle_type_from_string(c2 == std::string::npos ? "auto" : s.substr(c2 + 1), "--share");
      r.share = share_buffer(graph, in, e[0], i[0], h, job.channel, job.channel);
      r.share_exporter = e[0];
      r.share_importer = i[0];
    }
    std::cout << (o->format == "json" ? imex_report_to_json_text(r) : imex_report_to_text(r));
    // Exit 1 when the job does not get past NCCL init (cannot_start, init_error), so that a script can
    // use imex-check as a pre-flight test; 0 when it runs, MNNVL or IB fallback alike (the report says
    // which).
    if (!r.verdict.runs)
      throw NegativeVerdict("imex-check: the job cannot start (" + r.verdict.outcome + "): " + r.verdict.message);
  });
}

RACKSIM_REGISTER_COMMAND("imex-check", add_imex_check_command);

}  // namespace racksim::cli
