#include "sim/topo/nvlink_partitions.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "sim/core/errors.hpp"
#include "sim/topo/topology_graph.hpp"

namespace racksim {

namespace {

const char* kForms =
    "default, NxT (N partitions of T compute trays in every NVLink domain, e.g. 2x9, 18x1, 3x1) or "
    "NAME=trays:LIST[;NAME=gpus:LIST...] with LIST like 0-7,9 (global indices)";

[[noreturn]] void bad(const std::string& where, const std::string& value, const std::string& allowed = kForms) {
  throw InputError(where, "", "'" + value + "'", allowed);
}

bool digits_only(const std::string& s) { return !s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos; }

// "0-3,5" -> {0,1,2,3,5}, each in [0, count).
std::vector<int> index_list(const std::string& text, int count, const std::string& where, const std::string& what) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const std::size_t dash = item.find('-');
    const std::string a = item.substr(0, dash), b = dash == std::string::npos ? a : item.substr(dash + 1);
    if (!digits_only(a) || !digits_only(b)) bad(where, text, what + " indices like 0-7,9");
    const int lo = std::stoi(a), hi = std::stoi(b);
    if (lo > hi || hi >= count)
      bad(where, text, what + " indices in [0, " + std::to_string(count - 1) + "], ranges low-high");
    for (int i = lo; i <= hi; ++i) out.push_back(i);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// Physical NVLink domain of every compute tray (-1 without one), from its first GPU.
std::vector<int> tray_fabrics(const TopologyGraph& g) {
  std::vector<int> out;
  const int per_tray = g.gpus_per_tray();
  for (int t = 0; per_tray > 0 && t < g.gpu_count() / per_tray; ++t)
    out.push_back(g.vertices()[g.gpu_vertex(t * per_tray)].fabric);
  return out;
}

NvlinkPartition from_gpus(const TopologyGraph& g, std::string name, std::vector<int> gpus) {
  NvlinkPartition p;
  p.name = std::move(name);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  p.gpus = std::move(gpus);
  std::set<int> trays;
  for (int gpu : p.gpus) trays.insert(g.vertices()[g.gpu_vertex(gpu)].tray);
  p.trays.assign(trays.begin(), trays.end());
  p.fabric = p.gpus.empty() ? -1 : g.vertices()[g.gpu_vertex(p.gpus.front())].fabric;
  return p;
}

std::vector<int> gpus_of_trays(const TopologyGraph& g, const std::vector<int>& trays) {
  std::vector<int> out;
  const int per_tray = g.gpus_per_tray();
  for (int t : trays)
    for (int i = 0; i < per_tray; ++i) out.push_back(t * per_tray + i);
  return out;
}

}  // namespace

std::vector<std::string> partition_presets(const TopologyGraph& graph) {
  std::vector<std::string> out;
  if (graph.fabric_count() < 1) return out;
  const std::vector<int> fabric = tray_fabrics(graph);
  const int trays = static_cast<int>(std::count(fabric.begin(), fabric.end(), 0));
  for (int size = trays; size >= 1; --size)
    if (trays % size == 0) out.push_back(std::to_string(trays / size) + "x" + std::to_string(size));
  return out;
}

NvlinkPartitioning parse_partitions(const std::string& text, const TopologyGraph& g, const std::string& where) {
  if (g.fabric_count() < 1)
    throw InputError(where, "", "'" + text + "' on " + g.spec().id, "no partitions: the system has no NVLink switch domain");
  NvlinkPartitioning out;
  out.spec = text;
  const std::vector<int> fabric = tray_fabrics(g);
  const int trays = static_cast<int>(fabric.size());
  if (text == "default") {
    for (int f = 0; f < g.fabric_count(); ++f) {
      std::vector<int> members;
      for (int t = 0; t < trays; ++t)
        if (fabric[t] == f) members.push_back(t);
      out.partitions.push_back(from_gpus(g, "d" + std::to_string(f), gpus_of_trays(g, members)));
    }
    return out;
  }
  const auto x = text.find('x');
  if (text.find('=') == std::string::npos) {
    if (x == std::string::npos || !digits_only(text.substr(0, x)) || !digits_only(text.substr(x + 1))) bad(where, text);
    const int count = std::stoi(text.substr(0, x)), size = std::stoi(text.substr(x + 1));
    const int per_fabric = static_cast<int>(std::count(fabric.begin(), fabric.end(), 0));
    if (count < 1 || size < 1 || count * size > per_fabric) {
      std::string presets;
      for (const auto& p : partition_presets(g)) presets += (presets.empty() ? "" : ", ") + p;
      bad(where, text, "NxT with N x T <= " + std::to_string(per_fabric) + " compute trays per NVLink domain (presets " +
                           presets + ")");
    }
    for (int f = 0; f < g.fabric_count(); ++f) {
      std::vector<int> members;
      for (int t = 0; t < trays; ++t)
        if (fabric[t] == f) members.push_back(t);
      for (int k = 0; k < count; ++k) {
        const std::vector<int> part(members.begin() + k * size, members.begin() + (k + 1) * size);
        const std::string name = g.fabric_count() > 1 ? "d" + std::to_string(f) + ".p" + std::to_string(k)
                                                       : "p" + std::to_string(k);
        out.partitions.push_back(from_gpus(g, name, gpus_of_trays(g, part)));
      }
    }
    return out;
  }
  // Explicit: NAME=trays:LIST;NAME=gpus:LIST
  std::set<std::string> names;
  std::vector<int> owner(g.gpu_count(), -1);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t semi = text.find(';', pos);
    const std::string item = text.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos);
    const std::size_t eq = item.find('='), colon = item.find(':', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || eq == 0 || colon == std::string::npos) bad(where, item);
    const std::string name = item.substr(0, eq), kind = item.substr(eq + 1, colon - eq - 1), list = item.substr(colon + 1);
    if (name.size() > 64 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != std::string::npos)
      bad(where, name, "a partition name of letters, digits, '-' and '_' (at most 64)");
    if (!names.insert(name).second) bad(where, name, "distinct partition names");
    std::vector<int> gpus;
    if (kind == "trays")
      gpus = gpus_of_trays(g, index_list(list, trays, where, "tray"));
    else if (kind == "gpus")
      gpus = index_list(list, g.gpu_count(), where, "GPU");
    else
      bad(where, item);
    NvlinkPartition p = from_gpus(g, name, std::move(gpus));
    const int index = static_cast<int>(out.partitions.size());
    for (int gpu : p.gpus) {
      const int f = g.vertices()[g.gpu_vertex(gpu)].fabric;
      if (f < 0) bad(where, item, "GPUs of an NVLink switch domain (GPU " + std::to_string(gpu) + " is in none)");
      if (f != p.fabric)
        bad(where, item, "a partition inside one NVLink domain (NMX-M: all GPUs of a partition belong to one domain); GPU " +
                             std::to_string(gpu) + " is in domain " + std::to_string(f) + ", GPU " +
                             std::to_string(p.gpus.front()) + " in domain " + std::to_string(p.fabric));
      if (owner[gpu] >= 0)
        bad(where, item, "each GPU in at most one partition (GPU " + std::to_string(gpu) + " is already in " +
                             out.partitions[owner[gpu]].name + ")");
      owner[gpu] = index;
    }
    out.partitions.push_back(std::move(p));
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
  return out;
}

void TopologyGraph::apply_partitions(NvlinkPartitioning partitioning) {
  for (auto& v : vertices_)
    if (v.kind == VertexKind::gpu) v.domain = partitioning.partitions.empty() ? v.fabric : -1;
  for (std::size_t p = 0; p < partitioning.partitions.size(); ++p)
    for (int gpu : partitioning.partitions[p].gpus) vertices_[gpu_vertices_.at(gpu)].domain = static_cast<int>(p);
  partitioning_ = std::move(partitioning);
}

int TopologyGraph::fabric_count() const {
  return spec_.nvlink_domain ? racks_ / spec_.nvlink_domain->racks : 0;
}

int TopologyGraph::nvlink_domain_count() const {
  return partitioned() ? static_cast<int>(partitioning_.partitions.size()) : fabric_count();
}

}  // namespace racksim
