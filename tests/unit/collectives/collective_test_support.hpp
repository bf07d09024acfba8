#pragma once
// Helpers shared by the collective and analytic unit tests: shipped and test topologies, requests.
#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "sim/topo/system_catalog.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim::test {

inline TopologyGraph shipped(const std::string& id, int racks = 1) {
  return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR).load(id), racks);
}

// tests/unit/collectives/data/<file>.json
inline TopologyGraph test_system(const std::string& file, int racks = 1) {
  return TopologyGraph(SystemCatalog(RACKSIM_TOPOLOGY_DIR)
                           .load(std::string(RACKSIM_TEST_DATA_DIR) + "/unit/collectives/data/" + file + ".json"),
                       racks);
}

inline std::vector<int> first_gpus(int n, int first = 0) {
  std::vector<int> g(n);
  for (int i = 0; i < n; ++i) g[i] = first + i;
  return g;
}

// `per_domain` GPUs from each of `domains` domains of `domain_size` GPUs, domain by domain.
inline std::vector<int> spread(int per_domain, int domains, int domain_size) {
  std::vector<int> g;
  for (int k = 0; k < domains; ++k)
    for (int l = 0; l < per_domain; ++l) g.push_back(k * domain_size + l);
  return g;
}

inline CollectiveRequest make_request(CollectiveOp op, const std::string& algorithm, std::vector<int> gpus,
                                      std::uint64_t bytes, std::uint64_t chunk_bytes = 0) {
  CollectiveRequest r;
  r.op = op;
  r.algorithm = algorithm;
  r.gpus = std::move(gpus);
  r.bytes = bytes;
  r.chunk_bytes = chunk_bytes;
  return r;
}

}  // namespace racksim::test
