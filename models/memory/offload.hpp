#pragma once
// Offload calculator (seed course module 5, s2 and s4): model states, activations or KV cache kept in
// CPU memory (Grace LPDDR5X, or DDR on x86) and streamed to the GPUs every step over NVLink-C2C, or over
// PCIe Gen4/Gen5. Bytes per step, time per step as the slowest resource (each C2C or PCIe direction,
// each CPU-CPU direction, each CPU memory's read+write bandwidth), whether it hides behind a compute
// time, and whether the model fits in HBM and in CPU memory. The seed's example: a 70B model's fp32
// Adam states (12 B/param = 840 GB) fit in one GB200 tray's LPDDR and stream in seconds per step over
// C2C where PCIe Gen4 would take tens of seconds.
#include <cstdint>
#include <string>
#include <vector>

#include "models/memory/memory_params.hpp"
#include "sim/topo/topology_spec.hpp"

namespace racksim::memory {

enum class OffloadLink { topology, c2c, pcie4, pcie5 };
const char* to_string(OffloadLink link);
OffloadLink offload_link_from_string(const std::string& text, const std::string& where);

struct OffloadRequest {
  double params = 0;                      // model parameters
  double weight_bytes_per_param = 2;      // bf16 weights
  double grad_bytes_per_param = 2;        // bf16 gradients
  double optimizer_bytes_per_param = 12;  // fp32 master weights + Adam m and v (seed s4: 70B -> 840 GB)
  double activation_bytes = 0;            // activations saved per step (all GPUs together)
  double kv_bytes = 0;                    // KV cache (all GPUs together)
  bool offload_weights = false, offload_grads = false, offload_optimizer = false, offload_activations = false,
       offload_kv = false;
  int weight_reads_per_step = 2;          // training: forward + backward; inference: 1
  std::vector<std::string> gpus;          // tray GPU ids that stream (states sharded evenly); empty: the first
  OffloadLink link = OffloadLink::topology;  // the GPU-CPU link: the topology's, or C2C / PCIe Gen4 / Gen5 x16
  double compute_time_s = 0;              // compute per step to hide behind (0: not asked)
  double link_efficiency = 1.0;           // achieved / peak on the GPU-CPU link (1: the seed's arithmetic)
};

struct ResourceLoad {
  std::string name;                       // "c2c c2c0 host->gpu", "LPDDR5X cpu0 read+write", ...
  double bytes = 0;                       // per step
  double capacity_Bps = 0;
  double seconds = 0;
};

struct OffloadResult {
  std::string system;
  std::vector<std::string> gpus;
  double weights_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, kv_bytes = 0;
  double offloaded_bytes = 0;             // kept in CPU memory
  double hbm_resident_per_gpu_bytes = 0;  // what stays in each GPU's HBM
  double hbm_capacity_per_gpu_bytes = 0;
  bool fits_hbm = false;
  double host_free_bytes = 0;             // CPU memory free for pinned buffers (all CPU nodes of the tray)
  bool fits_host = false;
  std::vector<std::pair<std::string, double>> host_placement;  // CPU node -> offloaded bytes there
  double h2d_bytes = 0, d2h_bytes = 0;    // per step, all GPUs
  std::string link;                       // what carried it: "c2c (topology)", "pcie4 x16", ...
  double link_Bps = 0;                    // per direction, one link
  int link_sharers = 1;                   // GPUs per link capacity
  std::vector<ResourceLoad> resources;
  std::string bottleneck;
  double step_s = 0;                      // streaming time per step (resources in parallel, full duplex)
  double compute_time_s = 0;
  bool hidden = false;                    // step_s <= compute_time_s
  double exposed_s = 0;                   // max(0, step_s - compute_time_s)
  std::vector<std::string> notes;
};

// "70B" -> 7e10, "1.5T", "175M", "7e10"; InputError naming `where` otherwise.
// Parameters a model may have here: a thousand times the largest published models' ~1e12. More is a typo
// (1e30 was priced as 2e21 GB of weights).
inline constexpr double kMaxParams = 1e15;
double parse_param_count(const std::string& text, const std::string& where);

// Throws InputError for a request that makes no sense (no params and no bytes, nothing offloaded, an
// unknown GPU, a GPU listed twice, efficiency outside (0, 1]).
OffloadResult offload_step(const TopologySpec& spec, const OffloadRequest& request,
                           const TrayAssumptions& assumptions = {});

std::string offload_to_json_text(const OffloadResult& result);
std::string offload_to_text(const OffloadResult& result);

}  // namespace racksim::memory
