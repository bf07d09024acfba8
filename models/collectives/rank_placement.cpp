#include "models/collectives/rank_placement.hpp"

#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

std::vector<int> place_ranks(const TopologyGraph& graph, int ranks, const std::string& where) {
  const int racks = graph.racks();
  const int per_rack_gpus = graph.gpu_count() / racks;
  const std::string system = graph.spec().id + " x" + graph.spec().rack.count_label(racks);
  if (ranks < 1 || ranks > graph.gpu_count())
    throw InputError(where, "", std::to_string(ranks),
                     "an integer in [1, " + std::to_string(graph.gpu_count()) + "]: the GPUs of " + system);
  if (ranks % racks != 0)
    throw InputError(where, "", std::to_string(ranks),
                     "a multiple of the " + std::to_string(racks) + " racks (each rack gets the same number of ranks)");
  const int per_rack = ranks / racks;
  if (per_rack > per_rack_gpus)
    throw InputError(where, "", std::to_string(ranks),
                     "at most " + std::to_string(per_rack_gpus) + " ranks per rack on " + system);
  std::vector<int> gpus;
  gpus.reserve(ranks);
  for (int r = 0; r < racks; ++r)
    for (int i = 0; i < per_rack; ++i) gpus.push_back(r * per_rack_gpus + i);
  return gpus;
}

}  // namespace racksim
