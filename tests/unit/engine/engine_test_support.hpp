#pragma once
// Topology numbers the engine tests compute their closed forms from (never typed in by hand).
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "sim/topo/routes.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::test {

inline TopologyGraph load_graph(const std::string& id, int racks) {
  return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(id), racks);
}

inline std::vector<int> gpu_range(int first, int count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// NVLink numbers between two GPUs of one domain, from the graph's route: per-direction port bandwidth B,
// GPU-to-GPU latency alpha, and its two halves (GPU -> switch plane, switch plane -> GPU).
struct NvlinkNumbers {
  double B = 0, alpha = 0, up = 0, down = 0;
};
inline NvlinkNumbers nvlink_numbers(const TopologyGraph& g, int gpu_a = 0, int gpu_b = 1) {
  const Route r = find_route(g, g.gpu_vertex(gpu_a), g.gpu_vertex(gpu_b));
  return {r.bottleneck_Bps, r.latency_s, r.hops.at(0).latency_s, r.hops.at(1).latency_s};
}

// Scale-out numbers between two GPUs in different NVLink domains.
struct RouteNumbers {
  double B = 0, alpha = 0;
};
inline RouteNumbers route_numbers(const TopologyGraph& g, int gpu_a, int gpu_b) {
  const Route r = find_route(g, g.gpu_vertex(gpu_a), g.gpu_vertex(gpu_b));
  return {r.bottleneck_Bps, r.latency_s};
}

// Closed forms, with the whole-byte pieces the hand schedules send (S / n rounded down).
inline double ring_all_reduce_time(int n, std::uint64_t bytes, double alpha, double B) {
  return 2.0 * (n - 1) * (alpha + static_cast<double>(bytes / n) / B);
}
// hand_nvls_all_reduce with k pieces of s = S/k: k sends up (each after the previous), the plane's
// reduction of the last piece at `plane_Bps`, its multicast down.
inline double nvls_all_reduce_time(std::uint64_t bytes, int k, const NvlinkNumbers& nv, double plane_Bps) {
  const double s = static_cast<double>(bytes / k);
  return k * (nv.up + s / nv.B) + s / plane_Bps + nv.down + s / nv.B;
}

}  // namespace racksim::test
