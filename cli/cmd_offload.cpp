// racksim offload: model states / activations / KV cache kept in CPU memory and streamed to the GPUs
// each step over C2C or PCIe (models/memory/offload.hpp).
#include <iostream>

#include "cli/commands.hpp"
#include "models/memory/offload.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/system_catalog.hpp"

namespace racksim::cli {

namespace {
struct OffloadOptions {
  std::string system, params = "0", link = "topology", format, offload = "optimizer", gpus = "1";
  std::optional<std::string> activations, kv, c2c_shared;
  double weight_bytes = 2, grad_bytes = 2, optimizer_bytes = 12, compute_time = 0, efficiency = 1;
  int weight_reads = 2;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(',', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}
}  // namespace

static void add_offload_command(CLI::App& app, const GlobalOptions& global) {
  auto o = std::make_shared<OffloadOptions>();
  auto* cmd = app.add_subcommand("offload", "bytes and time per step to stream offloaded states/activations/KV from CPU memory over C2C or PCIe");
  cmd->add_option("--system", o->system, "system id or topology JSON path")->required();
  cmd->add_option("--params", o->params, "model parameters: 70B, 405B, 1.5T, 7e10");
  cmd->add_option("--offload", o->offload, "what lives in CPU memory, comma-separated: weights, grads, optimizer, activations, kv (default optimizer)");
  cmd->add_option("--gpus", o->gpus, "GPUs that stream: a count (the tray's first N) or ids like gpu0,gpu2 (default 1)");
  cmd->add_option("--link", o->link, "GPU-CPU link: topology (the system's), c2c, pcie4 or pcie5 (x16 per GPU)");
  cmd->add_option("--weight-bytes", o->weight_bytes, "bytes per parameter of weights (bf16: 2)")->check(non_negative_number());
  cmd->add_option("--grad-bytes", o->grad_bytes, "bytes per parameter of gradients (bf16: 2)")->check(non_negative_number());
  cmd->add_option("--optimizer-bytes", o->optimizer_bytes, "bytes per parameter of optimizer states (fp32 master + Adam m, v: 12)")->check(non_negative_number());
  cmd->add_option("--activations", o->activations, "activation bytes saved per step, all GPUs (e.g. 200GB)");
  cmd->add_option("--kv", o->kv, "KV cache bytes, all GPUs (read every step when offloaded)");
  cmd->add_option("--weight-reads", o->weight_reads, "times offloaded weights are read per step (training 2, inference 1)")->check(non_negative_number(true));
  cmd->add_option("--compute-time", o->compute_time, "compute seconds per step to hide the streaming behind")->check(non_negative_number());
  cmd->add_option("--efficiency", o->efficiency, "achieved / peak bandwidth on the GPU-CPU link, (0, 1] (default 1: vendor peak)");
  cmd->add_option("--c2c-shared", o->c2c_shared, "a superchip's two GPUs share one C2C: 1 (default, seed s4) or 0")->check(CLI::IsMember({"0", "1"}));
  add_format_option(*cmd, o->format, "text", {"text", "json"});
  cmd->callback([&global, o] {
    using namespace racksim::memory;
    const TopologySpec spec = SystemCatalog(global.topology_dir).load(o->system);
    OffloadRequest q;
    q.params = o->params == "0" ? 0 : parse_param_count(o->params, "--params");
    for (const auto& what : split_commas(o->offload)) {
      if (what == "weights") q.offload_weights = true;
      else if (what == "grads") q.offload_grads = true;
      else if (what == "optimizer") q.offload_optimizer = true;
      else if (what == "activations") q.offload_activations = true;
      else if (what == "kv") q.offload_kv = true;
      else throw InputError("--offload", "", "'" + what + "'", "weights, grads, optimizer, activations or kv (comma-separated)");
    }
    q.weight_bytes_per_param = o->weight_bytes;
    q.grad_bytes_per_param = o->grad_bytes;
    q.optimizer_bytes_per_param = o->optimizer_bytes;
    if (o->activations) q.activation_bytes = static_cast<double>(units::parse_bytes(*o->activations, "--activations"));
    if (o->kv) q.kv_bytes = static_cast<double>(units::parse_bytes(*o->kv, "--kv"));
    q.weight_reads_per_step = o->weight_reads;
    q.compute_time_s = o->compute_time;
    q.link_efficiency = o->efficiency;
    q.link = offload_link_from_string(o->link, "--link");
    TrayAssumptions a;
    if (o->c2c_shared) a.c2c_shared = *o->c2c_shared == "1";
    if (!o->gpus.empty() && o->gpus.find_first_not_of("0123456789") == std::string::npos) {
      const int count = std::stoi(o->gpus.substr(0, 6));
      const int have = static_cast<int>(spec.tray.gpus.size());
      if (count < 1 || count > have)
        throw InputError("--gpus", "", "'" + o->gpus + "'", "1.." + std::to_string(have) + " or GPU ids like gpu0,gpu2");
      for (int i = 0; i < count; ++i) q.gpus.push_back(spec.tray.gpus[i].id);
    } else {
      q.gpus = split_commas(o->gpus);
    }
    const OffloadResult r = offload_step(spec, q, a);
    std::cout << (o->format == "json" ? offload_to_json_text(r) : offload_to_text(r));
  });
}

RACKSIM_REGISTER_COMMAND("offload", add_offload_command);

}  // namespace racksim::cli
