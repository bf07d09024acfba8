#include "models/collectives/algorithm_support.hpp"

#include "models/collectives/nccl_choice.hpp"
#include "models/nccl/nccl_graphs.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {
std::string system_label(const TopologyGraph& graph) {
  return graph.spec().id + " x" + graph.spec().rack.count_label(graph.racks());
}
}  // namespace

void validate_request(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int n = static_cast<int>(request.gpus.size());
  const int min_ranks = request.op == CollectiveOp::send_recv ? 2 : 1;
  if (n < min_ranks)
    throw InputError("--gpus", "", std::to_string(n) + " rank(s)",
                     "at least " + std::to_string(min_ranks) + " GPU(s) for " + to_string(request.op));
  std::set<int> seen;
  for (int gpu : request.gpus) {
    if (gpu < 0 || gpu >= graph.gpu_count())
      throw InputError("--gpus", "", "GPU " + std::to_string(gpu),
                       "GPU indices in [0, " + std::to_string(graph.gpu_count()) + ") on " + system_label(graph));
    if (!seen.insert(gpu).second)
      throw InputError("--gpus", "", "GPU " + std::to_string(gpu) + " listed twice", "distinct GPU indices");
  }
  if (request.bytes < 1 || request.bytes > units::kMaxBytesPerRank)
    throw InputError("--bytes", "", std::to_string(request.bytes) + " bytes",
                     "1 to " + std::to_string(units::kMaxBytesPerRank) + " bytes (1 TiB) per rank");
  if (request.chunk_bytes > units::kMaxBytesPerRank)
    throw InputError("--chunk-bytes", "", std::to_string(request.chunk_bytes) + " bytes",
                     "0 (the algorithm's default) or 1 to " + std::to_string(units::kMaxBytesPerRank) + " bytes");
  // all_to_all needs n(n-1) transfers whatever the algorithm: refuse before anything is sized by it.
  if (request.op == CollectiveOp::all_to_all && static_cast<double>(n) * (n - 1) > kMaxTransfers)
    throw InputError("--gpus", "", std::to_string(n) + " GPUs for all_to_all: " + std::to_string(static_cast<long long>(n) * (n - 1)) +
                                   " transfers (n(n-1)), about " + std::to_string(static_cast<long long>(n) * (n - 1) / 1000000) + " GB to hold",
                     "at most " + std::to_string(kMaxTransfers) + " transfers in one run (kMaxTransfers): all_to_all on up to " +
                         std::to_string(static_cast<int>(std::floor(0.5 + std::sqrt(0.25 + kMaxTransfers)))) + " GPUs");
  if (request.root < 0 || request.root >= n)
    throw InputError("--root", "", std::to_string(request.root), "a rank in [0, " + std::to_string(n) + ")");
  dtype_size_bytes(request.dtype, "--dtype");
  if (request.inner_algorithm != "auto" && request.inner_algorithm != "ring" && request.inner_algorithm != "nvls")
    throw InputError("--inner-algorithm", "", "'" + request.inner_algorithm + "'", "one of auto, ring, nvls");
  hierarchical_outer(request);  // protocol, channels and the outer algorithm's name
}

int rank_vertex(const CollectiveRequest& request, const TopologyGraph& graph, int rank) {
  return graph.gpu_vertex(request.gpus.at(rank));
}

bool system_has_nvls(const TopologyGraph& graph) {
  return graph.spec().nvlink_domain && graph.spec().nvlink_domain->multicast_reduction;
}

int nvls_domain(const CollectiveRequest& request, const TopologyGraph& graph) {
  if (!system_has_nvls(graph))
    throw InputError("--algo", "", "'nvls' on " + graph.spec().id,
                     graph.spec().nvlink_domain
                         ? "an algorithm other than nvls (nvlink_domain.multicast_reduction is false: the switches "
                           "cannot reduce and multicast)"
                         : "an algorithm other than nvls (the system has no NVLink switch)");
  const int domain = graph.vertices()[rank_vertex(request, graph, 0)].domain;
  for (std::size_t r = 0; r < request.gpus.size(); ++r) {
    const int d = graph.vertices()[rank_vertex(request, graph, static_cast<int>(r))].domain;
    if (d != domain)
      throw InputError("--algo", "", "'nvls' with GPU " + std::to_string(request.gpus[r]) + " in NVLink domain " +
                                         std::to_string(d) + " and GPU " + std::to_string(request.gpus[0]) +
                                         " in domain " + std::to_string(domain),
                       "ranks inside one NVLink domain (use hierarchical across domains)");
  }
  return domain;
}

DomainGroups domain_groups(const CollectiveRequest& request, const TopologyGraph& graph) {
  DomainGroups g;
  std::map<int, int> group_of_domain;
  for (std::size_t r = 0; r < request.gpus.size(); ++r) {
    const int domain = graph.vertices()[rank_vertex(request, graph, static_cast<int>(r))].domain;
    if (domain < 0)
      throw InputError("--algo", "", "'hierarchical' on " + graph.spec().id,
                       "a system with NVLink domains (GPU " + std::to_string(request.gpus[r]) + " is in none)");
    auto [it, inserted] = group_of_domain.emplace(domain, static_cast<int>(g.ranks.size()));
    if (inserted) {
      g.ranks.emplace_back();
      g.domain_ids.push_back(domain);
    }
    g.ranks[it->second].push_back(static_cast<int>(r));
  }
  g.domains = static_cast<int>(g.ranks.size());
  g.per_domain = g.ranks.empty() ? 0 : static_cast<int>(g.ranks[0].size());
  for (std::size_t k = 0; k < g.ranks.size(); ++k)
    if (static_cast<int>(g.ranks[k].size()) != g.per_domain) {
      std::string counts;
      for (std::size_t j = 0; j < g.ranks.size(); ++j)
        counts += (j ? ", " : "") + std::to_string(g.ranks[j].size()) + " in domain " + std::to_string(g.domain_ids[j]);
      throw InputError("--gpus", "", "ranks spread unevenly over NVLink domains (" + counts + ")",
                       "the same number of ranks in every NVLink domain for hierarchical (N a multiple of the racks)");
    }
  return g;
}

CollnetGroups collnet_groups(const CollectiveRequest& request, const TopologyGraph& graph, const std::string& algorithm) {
  const auto& so = graph.spec().scale_out;
  if (!so || !so->infiniband())
    throw InputError("--algo", "", "'" + algorithm + "' on " + graph.spec().id,
                     "a system with an InfiniBand scale-out fabric (SHARP reduces in its switches)");
  CollnetGroups c;
  c.groups = domain_groups(request, graph);
  if (c.groups.domains < 2)
    throw InputError("--algo", "", "'" + algorithm + "' on one NVLink domain",
                     "ranks in at least 2 NVLink domains (CollNet reduces across nodes in the network)");
  for (std::size_t r = 0; r < request.gpus.size(); ++r) {
    const int nic = graph.nic_of_gpu(rank_vertex(request, graph, static_cast<int>(r)));
    if (nic < 0)
      throw InputError("--algo", "", "'" + algorithm + "' with GPU " + std::to_string(request.gpus[r]) + ", which has no NIC of its own",
                       "GPUs with a NIC each (a CollNet head sends through its own rail)");
    c.rail.push_back(graph.vertices()[nic].local);
  }
  // Position l of every domain sends through one rail (its fabric plane): ranks placed alike in every domain.
  for (const auto& group : c.groups.ranks)
    for (int l = 0; l < c.groups.per_domain; ++l)
      if (c.rail[group[l]] != c.rail[c.groups.ranks.front()[l]])
        throw InputError("--gpus", "", "'" + algorithm + "' with position " + std::to_string(l) +
                         " of the NVLink domains on different NIC rails",
                         "ranks placed alike in every domain (position l of each on one rail)");
  return c;
}

CollectiveRequest as_hierarchical(const CollectiveRequest& request, const std::string& inner, const std::string& outer) {
  CollectiveRequest r = request;
  r.algorithm = "hierarchical";
  r.inner_algorithm = inner;
  r.outer_algorithm = outer;
  return r;
}

std::string hierarchical_inner(const CollectiveRequest& request, const TopologyGraph& graph) {
  // --nvls off (NCCL_NVLS_ENABLE=0) holds inside the hierarchical algorithm too: auto takes the ring there.
  if (request.inner_algorithm == "auto") return system_has_nvls(graph) && request.nvls_enabled ? "nvls" : "ring";
  if (request.inner_algorithm == "nvls" && !system_has_nvls(graph))
    throw InputError("--inner-algorithm", "", "'nvls' on " + graph.spec().id,
                     "ring or auto (the system's switches cannot reduce and multicast)");
  if (request.inner_algorithm == "nvls" && !request.nvls_enabled)
    throw InputError("--inner-algorithm", "", "'nvls' with --nvls off", "ring or auto, or --nvls on (NCCL_NVLS_ENABLE=0 leaves no NVLS)");
  if (request.inner_algorithm != "ring" && request.inner_algorithm != "nvls")
    throw InputError("--inner-algorithm", "", "'" + request.inner_algorithm + "'", "one of auto, ring, nvls");
  return request.inner_algorithm;
}

std::string hierarchical_outer(const CollectiveRequest& request) {
  if (request.protocol != "auto") {
    std::string lower;
    for (char c : request.protocol) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != "ll" && lower != "ll128" && lower != "simple")
      throw InputError("--protocol", "", "'" + request.protocol + "'", "one of auto, LL, LL128, Simple");
  }
  if (request.channels < 0 || request.channels > 64)
    throw InputError("--channels", "", std::to_string(request.channels), "0 (NCCL's choice) or 1 to 64 (NCCL's MAXCHANNELS)");
  if (request.ib_qps_per_connection < 0 || request.ib_qps_per_connection > 128)
    throw InputError("--ib-qps-per-connection", "", std::to_string(request.ib_qps_per_connection),
                     "0 (NCCL's default, one) or 1 to 128 (NCCL_IB_QPS_PER_CONNECTION)");
  if (request.outer_algorithm != "ring" && request.outer_algorithm != "tree" && request.outer_algorithm != "sharp")
    throw InputError("--outer-algorithm", "", "'" + request.outer_algorithm + "'",
                     "one of ring, tree, sharp (the InfiniBand switches reduce: CollNet)");
  return request.outer_algorithm;
}

// ncclGetBtree: rank 0 is the root; otherwise, with `bit` the lowest set bit of the member, the parent
// is (member ^ bit) | (bit << 1), or member ^ bit when that is out of range.
int btree_parent(int n, int member) {
  if (member <= 0 || member >= n) return -1;
  int bit = 1;
  while (!(bit & member)) bit <<= 1;
  int up = (member ^ bit) | (bit << 1);
  if (up >= n) up = member ^ bit;
  return up;
}

DoubleTree double_binary_tree(int n) {
  DoubleTree t;
  t.n = n;
  for (int tree = 0; tree < 2; ++tree) {
    t.parent[tree].assign(n, -1);
    t.children[tree].assign(n, {});
    t.depth[tree].assign(n, 0);
  }
  for (int m = 0; m < n; ++m) {
    t.parent[0][m] = btree_parent(n, m);
    if (n % 2 == 1) {  // shift by one
      const int p = btree_parent(n, (m - 1 + n) % n);
      t.parent[1][m] = p < 0 ? -1 : (p + 1) % n;
    } else {           // mirror
      const int p = btree_parent(n, n - 1 - m);
      t.parent[1][m] = p < 0 ? -1 : n - 1 - p;
    }
  }
  for (int tree = 0; tree < 2; ++tree) {
    for (int m = 0; m < n; ++m)
      if (t.parent[tree][m] >= 0) t.children[tree][t.parent[tree][m]].push_back(m);
    for (int m = 0; m < n; ++m) {
      int d = 0;
      for (int x = m; t.parent[tree][x] >= 0; x = t.parent[tree][x]) ++d;
      t.depth[tree][m] = d;
      t.height = std::max(t.height, d);
    }
    t.order[tree].resize(n);
    for (int m = 0; m < n; ++m) t.order[tree][m] = m;
    std::stable_sort(t.order[tree].begin(), t.order[tree].end(),
                     [&](int a, int b) { return t.depth[tree][a] < t.depth[tree][b]; });
  }
  return t;
}

DoubleTree nccl_tree(const std::vector<std::vector<int>>& nodes, int n) {
  const int D = static_cast<int>(nodes.size());
  const DoubleTree across = double_binary_tree(D);
  DoubleTree t;
  t.n = n;
  for (int tree = 0; tree < 2; ++tree) {
    t.parent[tree].assign(n, -1);
    t.children[tree].assign(n, {});
    t.depth[tree].assign(n, 0);
    for (int k = 0; k < D; ++k) {
      const auto& chain = nodes[k];
      const int up = across.parent[tree][k];
      if (!chain.empty()) t.parent[tree][chain[0]] = up < 0 ? -1 : nodes[up][0];
      for (std::size_t i = 1; i < chain.size(); ++i) t.parent[tree][chain[i]] = chain[i - 1];
    }
    for (int m = 0; m < n; ++m)
      if (t.parent[tree][m] >= 0) t.children[tree][t.parent[tree][m]].push_back(m);
    for (int m = 0; m < n; ++m) {
      int d = 0;
      for (int x = m; t.parent[tree][x] >= 0; x = t.parent[tree][x]) ++d;
      t.depth[tree][m] = d;
      t.height = std::max(t.height, d);
    }
    t.order[tree].resize(n);
    for (int m = 0; m < n; ++m) t.order[tree][m] = m;
    std::stable_sort(t.order[tree].begin(), t.order[tree].end(),
                     [&](int a, int b) { return t.depth[tree][a] < t.depth[tree][b]; });
  }
  return t;
}

std::vector<std::vector<int>> nccl_nodes(const CollectiveRequest& request, const TopologyGraph& graph) {
  std::vector<std::vector<int>> nodes;
  std::vector<std::pair<int, int>> keys;
  for (int r = 0; r < static_cast<int>(request.gpus.size()); ++r) {
    const auto& v = graph.vertices()[graph.gpu_vertex(request.gpus[r])];
    const std::pair<int, int> key = v.domain >= 0 ? std::pair{v.domain, -1} : std::pair{-1, v.tray};
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      nodes.push_back({r});
    } else {
      nodes[it - keys.begin()].push_back(r);
    }
  }
  return nodes;
}

int nccl_rails(const CollectiveRequest& request, const TopologyGraph& graph) {
  const auto nodes = nccl_nodes(request, graph);
  if (nodes.size() <= 1) return 1;
  const nccl::NcclSystem s = nccl_system_of(graph, request);
  nccl::ChannelLimits limits;
  if (request.channels > 0) limits = {request.channels, request.channels};
  const nccl::Graphs g = nccl::compute_graphs(s, limits);
  int local = static_cast<int>(request.gpus.size());
  for (const auto& node : nodes) local = std::min(local, static_cast<int>(node.size()));
  return std::max(1, std::min({g.ring.n_channels, std::max(1, s.nics_per_node), local}));
}

std::vector<DoubleTree> nccl_trees(const CollectiveRequest& request, const TopologyGraph& graph) {
  const int n = static_cast<int>(request.gpus.size());
  const auto nodes = nccl_nodes(request, graph);
  const int rails = nccl_rails(request, graph);
  int local = n;
  for (const auto& node : nodes) local = std::min(local, static_cast<int>(node.size()));
  std::vector<DoubleTree> trees;
  for (int j = 0; j < rails; ++j) {
    const int rail = static_cast<int>(static_cast<long>(j) * local / rails);
    std::vector<std::vector<int>> rotated;
    for (const auto& node : nodes) {
      std::vector<int> chain;
      for (std::size_t i = 0; i < node.size(); ++i) chain.push_back(node[(rail + i) % node.size()]);
      rotated.push_back(std::move(chain));
    }
    trees.push_back(nccl_tree(rotated, n));
  }
  return trees;
}

long pieces_for_chunk(double unit_bytes, std::uint64_t chunk_bytes) {
  if (chunk_bytes == 0 || unit_bytes <= 0) return 1;
  const double pieces = std::ceil(unit_bytes / static_cast<double>(chunk_bytes));
  return static_cast<long>(std::clamp(pieces, 1.0, std::max(1.0, std::floor(unit_bytes))));
}

}  // namespace racksim
