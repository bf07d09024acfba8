#include "cli/collective_options.hpp"

#include "models/collectives/rank_placement.hpp"
#include "models/collectives/registry.hpp"
#include "models/collectives/sweep_sizes.hpp"
#include "models/nccl/nccl_system.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::cli {

void add_collective_options(CLI::App& cmd, CollectiveOptions& o, bool with_bytes) {
  cmd.add_option("--system", o.system, "system id (racksim systems) or path to a topology JSON file")->required();
  cmd.add_option("--racks", o.racks, "number of racks (default: the system's default, or the fewest that hold --gpus)");
  cmd.add_option("--op", o.op, "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce or send_recv")->required();
  cmd.add_option("--gpus", o.gpus, "ranks, placed in order over the trays, N/R per rack")->required();
  if (with_bytes)
    cmd.add_option("--bytes", o.bytes, "nccl-tests' size: 1G, 512M, 64K or a number of bytes")->required();
  // The names come from the registry (models/collectives/registry.cpp), per op, so a new algorithm shows here.
  std::string per_op;
  for (CollectiveOp op : all_collective_ops()) {
    std::string names;
    for (const auto& n : algorithm_names(op)) names += (names.empty() ? "" : ", ") + n;
    per_op += std::string(per_op.empty() ? "" : "; ") + to_string(op) + ": " + names;
  }
  cmd.add_option("--algo", o.algo,
                 "auto (what NCCL 2.28 would run; CollNet only when named or with --collnet on, NCCL_COLLNET_ENABLE being off by default) or "
                 "one of the op's algorithms (" + per_op + "); like NCCL_ALGO");
  cmd.add_option("--protocol", o.protocol, "auto (NCCL's choice), LL, LL128 or Simple; like NCCL_PROTO");
  cmd.add_option("--channels", o.channels, "NCCL channels (CTAs), 1-64, or 0 (the default): NCCL's choice; like NCCL_MIN/MAX_NCHANNELS");
  cmd.add_option("--ib-qps-per-connection", o.ib_qps,
                 "queue pairs of each InfiniBand / RoCE connection across nodes, 1-128; default NCCL's one; like "
                 "NCCL_IB_QPS_PER_CONNECTION");
  cmd.add_option("--nvls", o.nvls, "on (default) or off: off keeps auto off NVLS and NVLS-tree, like NCCL_NVLS_ENABLE=0")
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_option("--collnet", o.collnet,
                 "off (default) or on: on lets auto pick CollNet (IB SHARP) and NVLS over CollNet across nodes, like "
                 "NCCL_COLLNET_ENABLE=1 with the SHARP plugin")
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_option("--nccl-version", o.nccl_version,
                 "the NCCL whose tuner decides and prices the run: 2.28 (default) or a version from 2.18 on as NCCL "
                 "prints it (2.27.3, 2.26.6+cuda12.8); 2.18-2.27 take NCCL 2.27's tuner tables (2.18-2.24, older than "
                 "them, with a warning saying how near), 2.29 2.29's, 2.30 and later 2.30's");
  cmd.add_option("--inner,--inner-algorithm", o.inner, "hierarchical: algorithm inside each NVLink domain (ring, nvls, auto)");
  cmd.add_option("--outer,--outer-algorithm", o.outer, "hierarchical: algorithm across domains (ring, tree, sharp)");
  cmd.add_option("--fail", o.fail,
                 "a failure (repeatable): tray:T, gpu:G, switch-tray:S, switch-tray:D.S, switch-chip:D.C, nvlink:G.C, "
                 "trunk:D.K, nic:N, ib-link:R.K, imex:T, link:NAME[@F] (docs/failures.md)");
  cmd.add_option("--partitions", o.partitions,
                 "NVLink partitions: default, NxT (e.g. 2x9, 18x1, 3x1) or NAME=trays:0-7;NAME=gpus:32-35");
  cmd.add_option("--partition-mode", o.partition_mode,
                 "what lost NVLinks and switches do: full-bandwidth (default: GPUs parked, partition unhealthy) or "
                 "adaptive-bandwidth (every GPU keeps running on the links left)");
  cmd.add_option("--chunk-bytes", o.chunk_bytes, "pipelining chunk (default: the algorithm's choice)");
  cmd.add_option("--calibration", o.calibration, "calibration JSON file, 'default' (shipped) or 'none' (vendor peaks)");
  cmd.add_option("--dtype", o.dtype, "element type (nccl-tests' count column; default float)");
  cmd.add_option("--root", o.root, "broadcast / reduce root, send_recv first rank (default 0)");
  cmd.add_option("--nic-GBps", o.nic_GBps,
                 "run every scale-out NIC at this per-direction bandwidth, GB/s (default: the topology's; "
                 "the course's NIC slider: CX-7 50, CX-8 100)");
}

std::uint64_t parse_size_option(const std::string& text, const std::string& option) {
  const std::uint64_t bytes = units::parse_bytes(text, option);
  if (bytes == 0 || bytes > units::kMaxBytesPerRank)
    throw InputError(option, "", "'" + text + "' (" + std::to_string(bytes) + " bytes)",
                     "a size in [1 B, 1 TiB] per rank, such as 8, 64K, 512M or 1G");
  return bytes;
}

CollectiveSetup setup_collective(const CollectiveOptions& o, const GlobalOptions& global) {
  CollectiveSetup s;
  TopologySpec spec = SystemCatalog(global.topology_dir).load(o.system);
  if (o.nic_GBps) {
    // Same bounds as a topology file's bandwidths (topology_spec.hpp).
    if (!(*o.nic_GBps >= kMinLinkBandwidth_GBps && *o.nic_GBps <= kMaxBandwidth_GBps))
      throw InputError("--nic-GBps", "", number_text(*o.nic_GBps),
                       fmt::format("a bandwidth in [{:g}, {:g}] GB/s per direction (what a topology file allows)", kMinLinkBandwidth_GBps,
                                   kMaxBandwidth_GBps));
    if (spec.nic_types.empty()) throw InputError("--nic-GBps", "", number_text(*o.nic_GBps), "a system with scale-out NICs (" + spec.id + " has none)");
    for (auto& nic : spec.nic_types) nic.bandwidth_GBps = *o.nic_GBps;
  }
  s.graph = std::make_unique<TopologyGraph>(spec, racks_for_gpus(o.racks, spec, o.gpus));
  if (!o.partitions.empty()) s.graph->apply_partitions(parse_partitions(o.partitions, *s.graph, "--partitions"));
  s.calibration = load_calibration(o.calibration);
  for (const auto& item : o.fail) s.failures.items.push_back(parse_failure_item(item));
  s.failures.mode = partition_mode_from_string(o.partition_mode, "--partition-mode");
  validate_failures(s.failures, *s.graph);  // also where nothing is simulated (schedule dump)
  CollectiveRequest& r = s.request;
  r.op = collective_op_from_string(o.op, "--op");
  r.algorithm = o.algo;
  r.protocol = o.protocol;
  r.channels = o.channels;
  r.ib_qps_per_connection = o.ib_qps;
  r.nvls_enabled = o.nvls != "off";
  r.collnet_enabled = o.collnet == "on";
  nccl::tuner_release(o.nccl_version, "--nccl-version");  // exit 2 on an unknown version, before anything runs
  r.nccl_version = o.nccl_version;
  r.gpus = place_ranks(*s.graph, o.gpus, "--gpus");
  if (!o.bytes.empty()) r.bytes = parse_size_option(o.bytes, "--bytes");
  if (!o.chunk_bytes.empty()) r.chunk_bytes = parse_size_option(o.chunk_bytes, "--chunk-bytes");
  dtype_size_bytes(o.dtype, "--dtype");
  r.dtype = o.dtype;
  // What does not apply is refused, not ignored (the run would not be the one asked for).
  if (o.root && !op_has_root(r.op))
    throw InputError("--root", "", std::to_string(*o.root), "only with --op broadcast, reduce or send_recv (" + o.op + " has no root)");
  r.root = o.root.value_or(0);
  for (const auto& [name, value] : {std::pair{"--inner", o.inner}, std::pair{"--outer", o.outer}})
    if (value && o.algo != "hierarchical")
      throw InputError(name, "", "'" + *value + "'", "only with --algo hierarchical (the algorithm it chooses parts of; --algo is " + o.algo + ")");
  // nccl-tests' size: whole elements (per rank for all_gather, reduce_scatter, alltoall), as it runs and prints them
  if (r.bytes > 0) r.bytes = nccl_tests_bytes_of(r, r.bytes, "--bytes");
  r.inner_algorithm = o.inner.value_or("auto");
  r.outer_algorithm = o.outer.value_or("ring");
  if (!r.nvls_enabled && algorithm_uses_nvls(o.algo))
    throw InputError("--algo", "", "'" + o.algo + "' with --nvls off", "an algorithm without NVLS, or --nvls on (NCCL_NVLS_ENABLE=0 leaves NCCL no NVLS to run)");
  return s;
}

void add_model_option(CLI::App& cmd, std::string& model) {
  cmd.add_option("--model", model,
                 "auto (default): the discrete-event engine, or the closed form where the engine will not run a request "
                 "(over its memory or time budget; the result says so); engine: the engine or that refusal; analytic: "
                 "the closed form (alpha-beta on the same topology, NCCL terms and calibration, no contention; what "
                 "racksim validate prices)")
      ->check(CLI::IsMember({"auto", "engine", "analytic"}));
}

bool engine_only(const CLI::App& cmd, const CollectiveOptions& o, const std::vector<std::string>& engine_options) {
  std::vector<std::string> given;
  if (!o.fail.empty()) given.push_back("--fail");
  for (const auto& name : engine_options)
    if (cmd.count(name) > 0) given.push_back(name);
  return check_model_choice("--model", o.model, given);
}

}  // namespace racksim::cli
