#include "sim/topo/topology_spec.hpp"

#include "sim/topo/topology_cache.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <set>

#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/remembered_files.hpp"
#include "sim/core/units.hpp"

namespace racksim {

namespace {
const std::vector<std::string> kLinkKindNames = {"nvlink", "c2c", "pcie", "cpu-cpu", "nic", "ib"};
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::c2c: return "c2c";
    case LinkKind::pcie: return "pcie";
    case LinkKind::cpu_cpu: return "cpu-cpu";
    case LinkKind::nic: return "nic";
    case LinkKind::ib: return "ib";
  }
  return "?";
}

const char* to_string(GpuLinksScope scope) { return scope == GpuLinksScope::rack ? "rack" : "domain"; }

std::optional<LinkKind> link_kind_from_string(const std::string& text) {
  static const LinkKind kinds[] = {LinkKind::nvlink, LinkKind::c2c, LinkKind::pcie,
                                   LinkKind::cpu_cpu, LinkKind::nic, LinkKind::ib};
  for (LinkKind k : kinds)
    if (text == to_string(k)) return k;
  return std::nullopt;
}

template <typename T>
static const T& find_by_id(const std::vector<T>& items, const std::string& id, const char* what) {
  for (const auto& item : items)
    if (item.id == id) return item;
  throw InputError(std::string("unknown ") + what + " '" + id + "'");
}

const GpuType& TopologySpec::gpu_type(const std::string& id) const { return find_by_id(gpu_types, id, "GPU type"); }
const CpuType& TopologySpec::cpu_type(const std::string& id) const { return find_by_id(cpu_types, id, "CPU type"); }
const NicType& TopologySpec::nic_type(const std::string& id) const { return find_by_id(nic_types, id, "NIC type"); }
const LinkType& TopologySpec::link_type(const std::string& id) const {
  return find_by_id(link_types, id, "link type");
}

namespace {

// Every number in a file carries a source: each object has "source", a ';'-separated list whose
// items start with a key of the file's "references" table ("nvidia-gb200: 186 GB; seed-m5 s2").
class SourceChecker {
 public:
  explicit SourceChecker(const std::map<std::string, std::string>& refs) : refs_(refs) {}
  std::string read(JsonObjectReader& r) const {
    std::string text = r.string("source");
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find(';', start);
      if (end == std::string::npos) end = text.size();
      std::string item = text.substr(start, end - start);
      std::size_t b = item.find_first_not_of(' ');
      std::string key = b == std::string::npos ? "" : item.substr(b, item.find_first_of(" :,", b) - b);
      if (!refs_.count(key)) r.fail("source", "'" + text + "' (reference '" + key + "')", allowed());
      start = end + 1;
    }
    return text;
  }

 private:
  std::string allowed() const {
    std::string keys;
    for (const auto& [k, v] : refs_) keys += (keys.empty() ? "" : ", ") + k;
    return "items that start with a key of /references (" + keys + ")";
  }
  const std::map<std::string, std::string>& refs_;
};

// Checks that an id is unique in `seen` (one namespace per category, and one for tray devices).
void claim_id(std::set<std::string>& seen, const std::string& id, const JsonObjectReader& r) {
  if (!seen.insert(id).second) r.fail("id", "'" + id + "' (duplicate id)", "ids unique within the file");
}

void check_ref(const std::set<std::string>& ids, const std::string& key, const std::string& value,
               const JsonObjectReader& r, const char* what) {
  if (ids.count(value)) return;
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  r.fail(key, "'" + value + "' (no such " + std::string(what) + ")", list.empty() ? "none defined" : list);
}

template <typename T, typename F>
std::vector<T> read_array(JsonObjectReader& parent, const std::string& key, F read_one, bool required = true) {
  std::vector<T> out;
  if (!required && !parent.has(key)) return out;
  const auto& arr = parent.array(key);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    auto r = array_element(arr, i, parent.where(), parent.pointer_of(key));
    out.push_back(read_one(r));
    r.finish();
  }
  return out;
}

constexpr double kMaxCapacity_GB = 1e6;

}  // namespace

namespace {
TopologySpec topology_from_json(const nlohmann::json& doc, const std::string& where) {
  JsonObjectReader root(doc, where);
  TopologySpec spec;
  if (!root.has("schema_version"))
    throw InputError(where, "/schema_version", "(missing)", "schema_version " + std::to_string(kTopologySchemaVersion));
  spec.schema_version = static_cast<int>(root.integer_in("schema_version", kTopologySchemaVersion, kTopologySchemaVersion));
  spec.id = root.string("id");
  spec.description = root.string("description");
  {
    auto refs = root.object("references");
    const auto& raw = root.raw("references");
    for (auto it = raw.begin(); it != raw.end(); ++it) spec.references[it.key()] = refs.string(it.key());
    refs.finish();
  }
  SourceChecker sources(spec.references);

  std::set<std::string> gpu_ids, cpu_ids, nic_ids, link_ids;
  spec.gpu_types = read_array<GpuType>(root, "gpu_types", [&](JsonObjectReader& r) {
    GpuType t;
    t.id = r.string("id");
    claim_id(gpu_ids, t.id, r);
    t.name = r.string("name");
    if (r.has("hbm_capacity_GB"))
      r.fail("hbm_capacity_GB", json_excerpt(r.raw("hbm_capacity_GB")),
             "no such key since schema 1.1 of issue 16: hbm_capacity_bytes (what the driver reports, e.g. "
             "nvidia-smi's 189471 MiB = 198674743296) and hbm_marketed_GB (NVIDIA's 186)");
    t.hbm_capacity_bytes = static_cast<std::uint64_t>(
        r.integer_in("hbm_capacity_bytes", 1 << 20, static_cast<long>(kMaxCapacity_GB * units::kGB)));
    t.hbm_marketed_GB = r.number_in("hbm_marketed_GB", 1e-3, kMaxCapacity_GB);
    t.hbm_bandwidth_GBps = r.number_in("hbm_bandwidth_GBps", 1e-3, kMaxBandwidth_GBps);
    t.sm_count = static_cast<int>(r.integer_in("sm_count", 1, 100000));
    t.nvlink_ports = static_cast<int>(r.integer_in_or("nvlink_ports", 0, 1024, 0));
    t.compute_capability = static_cast<int>(r.integer_in("compute_capability", 30, 200));
    t.integrated = r.boolean_or("integrated", false);
    t.source = sources.read(r);
    return t;
  });
  spec.cpu_types = read_array<CpuType>(root, "cpu_types", [&](JsonObjectReader& r) {
    CpuType t;
    t.id = r.string("id");
    claim_id(cpu_ids, t.id, r);
    t.name = r.string("name");
    t.cores = static_cast<int>(r.integer_in("cores", 1, 100000));
    t.isa = r.one_of("isa", {"x86_64", "aarch64"});
    t.vendor = r.one_of("vendor", {"intel", "amd", "nvidia", "other"});
    t.memory_kind = r.string("memory_kind");
    t.memory_capacity_GB = r.number_in("memory_capacity_GB", 1e-3, kMaxCapacity_GB);
    t.memory_bandwidth_GBps = r.number_in("memory_bandwidth_GBps", 1e-3, kMaxBandwidth_GBps);
    t.source = sources.read(r);
    return t;
  });
  spec.nic_types = read_array<NicType>(root, "nic_types", [&](JsonObjectReader& r) {
    NicType t;
    t.id = r.string("id");
    claim_id(nic_ids, t.id, r);
    t.name = r.string("name");
    t.bandwidth_GBps = r.number_in("bandwidth_GBps", kMinLinkBandwidth_GBps, kMaxBandwidth_GBps);
    t.latency_us = r.number_in("latency_us", 0, kMaxLatency_us);
    t.source = sources.read(r);
    return t;
  }, /*required=*/false);
  spec.link_types = read_array<LinkType>(root, "link_types", [&](JsonObjectReader& r) {
    LinkType t;
    t.id = r.string("id");
    claim_id(link_ids, t.id, r);
    t.kind = *link_kind_from_string(r.one_of("kind", kLinkKindNames));
    t.bandwidth_GBps = r.number_in("bandwidth_GBps", kMinLinkBandwidth_GBps, kMaxBandwidth_GBps);
    t.latency_us = r.number_in("latency_us", 0, kMaxLatency_us);
    t.lanes = static_cast<int>(r.integer_in("lanes", 1, 1024));
    t.source = sources.read(r);
    return t;
  });

  {
    auto tr = root.object("tray");
    spec.tray.name = tr.string("name");
    std::set<std::string> device_ids, tray_cpus, tray_gpus;
    spec.tray.cpus = read_array<TrayCpu>(tr, "cpus", [&](JsonObjectReader& r) {
      TrayCpu c{r.string("id"), r.string("type")};
      claim_id(device_ids, c.id, r);
      check_ref(cpu_ids, "type", c.type, r, "CPU type");
      tray_cpus.insert(c.id);
      return c;
    });
    spec.tray.gpus = read_array<TrayGpu>(tr, "gpus", [&](JsonObjectReader& r) {
      TrayGpu g{r.string("id"), r.string("type"), r.string("cpu")};
      claim_id(device_ids, g.id, r);
      check_ref(gpu_ids, "type", g.type, r, "GPU type");
      check_ref(tray_cpus, "cpu", g.cpu, r, "tray CPU");
      tray_gpus.insert(g.id);
      return g;
    });
    spec.tray.nics = read_array<TrayNic>(tr, "nics", [&](JsonObjectReader& r) {
      TrayNic n{r.string("id"), r.string("type"), r.string("gpu")};
      claim_id(device_ids, n.id, r);
      check_ref(nic_ids, "type", n.type, r, "NIC type");
      check_ref(tray_gpus, "gpu", n.gpu, r, "tray GPU");
      return n;
    }, /*required=*/false);
    spec.tray.links = read_array<TrayLink>(tr, "links", [&](JsonObjectReader& r) {
      TrayLink l{r.string("a"), r.string("b"), r.string("type"), r.string_or("share_group", "")};
      check_ref(device_ids, "a", l.a, r, "tray device");
      check_ref(device_ids, "b", l.b, r, "tray device");
      check_ref(link_ids, "type", l.type, r, "link type");
      if (l.a == l.b) r.fail("b", "'" + l.b + "' (a link from a device to itself)", "two different devices");
      return l;
    });
    if (spec.tray.gpus.empty()) tr.fail("gpus", "[] (no GPU)", "at least one GPU per tray");
    spec.tray.source = sources.read(tr);
    tr.finish();
  }
  {
    auto rk = root.object("rack");
    spec.rack.trays = static_cast<int>(rk.integer_in("trays", 1, 4096));
    // Absent: no fixed cap (kUncappedRacks), the memory estimate decides (issue 14).
    spec.rack.max_racks = static_cast<int>(rk.integer_in_or("max_racks", 1, kUncappedRacks - 1, kUncappedRacks));
    spec.rack.default_racks = static_cast<int>(rk.integer_in_or("default_racks", 1, spec.rack.max_racks, 1));
    spec.rack.unit = rk.one_of_or("unit", {"rack", "node"}, "rack");
    spec.rack.source = sources.read(rk);
    rk.finish();
  }
  if (root.has("nvlink_domain")) {
    auto nd = root.object("nvlink_domain");
    NvlinkDomainSpec d;
    d.racks = static_cast<int>(nd.integer_in("racks", 1, 64));
    d.switch_trays = static_cast<int>(nd.integer_in("switch_trays", 0, 1024));
    d.chips_per_switch_tray = static_cast<int>(nd.integer_in("chips_per_switch_tray", 1, 64));
    d.chip_name = nd.string("chip_name");
    const bool rack_scope = nd.one_of_or("gpu_links_scope", {"domain", "rack"}, "domain") == "rack";
    d.gpu_links_scope = rack_scope ? GpuLinksScope::rack : GpuLinksScope::domain;
    if (rack_scope && d.racks < 2)
      nd.fail("gpu_links_scope", "'rack' (nvlink_domain.racks is " + std::to_string(d.racks) + ")",
              "'domain' for a one-rack domain; 'rack' needs racks >= 2");
    if (rack_scope && d.switch_trays % d.racks != 0)
      nd.fail("switch_trays", std::to_string(d.switch_trays),
              "a multiple of nvlink_domain.racks (" + std::to_string(d.racks) + ") with gpu_links_scope 'rack'");
    const auto& per_chip = nd.array("gpu_links_per_chip");
    for (std::size_t i = 0; i < per_chip.size(); ++i) {
      if (!per_chip[i].is_number_integer() || per_chip[i].get<long>() < 1 || per_chip[i].get<long>() > 64)
        throw InputError(where, nd.pointer_of("gpu_links_per_chip") + "/" + std::to_string(i),
                         json_excerpt(per_chip[i]), "an integer in [1, 64]");
      d.gpu_links_per_chip.push_back(per_chip[i].get<int>());
    }
    const int chips = d.switch_trays * d.chips_per_switch_tray;
    const int reached = rack_scope ? chips / d.racks : chips;
    if (static_cast<int>(d.gpu_links_per_chip.size()) != reached)
      nd.fail("gpu_links_per_chip", std::to_string(d.gpu_links_per_chip.size()) + " entries",
              rack_scope ? "one entry per switch chip of one rack (switch_trays x chips_per_switch_tray / racks = " +
                               std::to_string(reached) + ")"
                         : "one entry per switch chip (switch_trays x chips_per_switch_tray = " +
                               std::to_string(chips) + ")");
    d.link_type = nd.string("link_type");
    check_ref(link_ids, "link_type", d.link_type, nd, "link type");
    if (spec.link_type(d.link_type).kind != LinkKind::nvlink)
      nd.fail("link_type", "'" + d.link_type + "'", "a link type of kind nvlink");
    d.switch_latency_us = nd.number_in("switch_latency_us", 0, kMaxLatency_us);
    d.multicast_reduction = nd.boolean("multicast_reduction");
    if (rack_scope) {
      d.inter_rack_latency_us = nd.number_in("inter_rack_latency_us", 0, kMaxLatency_us);
      // The trunk is non-blocking: chip k of a rack has as many trunk links, spread evenly over the other
      // racks of the domain, as it has GPU links. That split must come out in whole links.
      const int gpus_per_rack = spec.rack.trays * static_cast<int>(spec.tray.gpus.size());
      for (int n : d.gpu_links_per_chip)
        if ((gpus_per_rack * n) % (d.racks - 1) != 0)
          nd.fail("racks", std::to_string(d.racks),
                  "a count that splits each chip's " + std::to_string(gpus_per_rack * n) +
                      " trunk links evenly over the other racks");
    } else if (nd.has("inter_rack_latency_us")) {
      nd.fail("inter_rack_latency_us", json_excerpt(nd.raw("inter_rack_latency_us")),
              "only with gpu_links_scope 'rack' (a domain-scope fabric has no trunk)");
    }
    d.source = sources.read(nd);
    nd.finish();
    int links = 0;
    for (int n : d.gpu_links_per_chip) links += n;
    for (const auto& g : spec.tray.gpus) {
      const auto& type = spec.gpu_type(g.type);
      if (type.nvlink_ports != links)
        throw InputError(where, "/nvlink_domain/gpu_links_per_chip", std::to_string(links) + " links per GPU",
                         "the sum must equal GPU type '" + type.id + "' nvlink_ports (" +
                             std::to_string(type.nvlink_ports) + ")");
    }
    if (spec.rack.default_racks % d.racks != 0 || (spec.rack.capped() && spec.rack.max_racks % d.racks != 0))
      throw InputError(where, "/rack/default_racks", std::to_string(spec.rack.default_racks),
                       "a multiple of nvlink_domain.racks (" + std::to_string(d.racks) + ")");
    spec.nvlink_domain = d;
  }
  if (root.has("scale_out")) {
    auto so = root.object("scale_out");
    ScaleOutSpec s;
    s.fabric = so.string("fabric");
    s.switch_latency_us = so.number_in("switch_latency_us", 0, kMaxLatency_us);
    s.oversubscription = so.number_in("oversubscription", 1, 1000);
    if (so.has("transport")) {
      auto tr = so.object("transport");
      NetTransportSpec t;
      t.name = tr.string("name");
      t.net_step_latency_us = tr.number_in("net_step_latency_us", 0, kMaxLatency_us);
      t.simple_step_overhead_us = tr.number_in_or("simple_step_overhead_us", 0, kMaxLatency_us, 0);
      t.plugin_latency_us = tr.number_in_or("plugin_latency_us", 0, kMaxLatency_us, 0);
      t.source = sources.read(tr);
      tr.finish();
      s.transport = t;
    }
    s.source = sources.read(so);
    so.finish();
    if (spec.tray.nics.empty()) so.fail("fabric", "'" + s.fabric + "'", "a tray with at least one NIC");
    spec.scale_out = s;
  }
  root.finish();
  return spec;
}

}  // namespace

std::string describe(const NetTransportSpec& t) {
  return fmt::format("{}: {:g} us a network step ({:g} more with Simple), {:g} us reported to NCCL", t.name,
                     t.net_step_latency_us, t.simple_step_overhead_us, t.plugin_latency_us);
}

TopologySpec topology_from_json_text(const std::string& text, const std::string& where) {
  return topology_from_json(parse_json_text(text, where), where);
}

namespace {
RememberedFiles<TopologySpec>& topology_files_read() {
  static RememberedFiles<TopologySpec> files;
  return files;
}
}  // namespace

TopologySpec load_topology_file(const std::string& path) {
  std::string text = read_json_file_text(path);
  // Parsed before in this process, else by an earlier one of this build (sim/topo/topology_cache.hpp).
  return topology_files_read().value_for(std::move(text), cached_topology, cache_topology, [&](const std::string& json) {
    return topology_from_json(parse_json_text(json, path), path);
  });
}

int racks_to_hold(const TopologySpec& spec, int gpus) {
  const long per_rack = std::max(1L, static_cast<long>(spec.rack.trays) * static_cast<long>(spec.tray.gpus.size()));
  const long domain_racks = std::max(1, spec.nvlink_domain ? spec.nvlink_domain->racks : 1);
  const long racks = (std::max(1L, static_cast<long>(gpus)) + per_rack - 1) / per_rack;
  return static_cast<int>(std::min<long>((racks + domain_racks - 1) / domain_racks * domain_racks, kUncappedRacks));
}

int gpus_per_nvlink_domain(const TopologySpec& spec) {
  const int per_tray = static_cast<int>(spec.tray.gpus.size());
  if (!spec.nvlink_domain) return per_tray * spec.rack.trays;  // one node without NVSwitch
  return spec.nvlink_domain->racks * spec.rack.trays * per_tray;
}

std::string topology_json_text_of(const TopologySpec& spec) {
  if (auto text = topology_files_read().text_of(spec)) return std::move(*text);
  return topology_to_json_text(spec);
}

std::string topology_to_json_text(const TopologySpec& s) {
  using nlohmann::json;
  json j;
  j["schema_version"] = s.schema_version;
  j["id"] = s.id;
  j["description"] = s.description;
  j["references"] = s.references;
  for (const auto& t : s.gpu_types) {
    json g{{"id", t.id}, {"name", t.name}, {"hbm_capacity_bytes", t.hbm_capacity_bytes}, {"hbm_marketed_GB", t.hbm_marketed_GB},
           {"hbm_bandwidth_GBps", t.hbm_bandwidth_GBps}, {"sm_count", t.sm_count},
           {"compute_capability", t.compute_capability}, {"source", t.source}};
    if (t.nvlink_ports) g["nvlink_ports"] = t.nvlink_ports;
    if (t.integrated) g["integrated"] = true;
    j["gpu_types"].push_back(g);
  }
  for (const auto& t : s.cpu_types)
    j["cpu_types"].push_back({{"id", t.id}, {"name", t.name}, {"cores", t.cores}, {"isa", t.isa},
                              {"vendor", t.vendor}, {"memory_kind", t.memory_kind},
                              {"memory_capacity_GB", t.memory_capacity_GB},
                              {"memory_bandwidth_GBps", t.memory_bandwidth_GBps}, {"source", t.source}});
  for (const auto& t : s.nic_types)
    j["nic_types"].push_back({{"id", t.id}, {"name", t.name}, {"bandwidth_GBps", t.bandwidth_GBps},
                              {"latency_us", t.latency_us}, {"source", t.source}});
  for (const auto& t : s.link_types)
    j["link_types"].push_back({{"id", t.id}, {"kind", to_string(t.kind)}, {"bandwidth_GBps", t.bandwidth_GBps},
                               {"latency_us", t.latency_us}, {"lanes", t.lanes}, {"source", t.source}});
  json tray{{"name", s.tray.name}, {"source", s.tray.source}};
  for (const auto& c : s.tray.cpus) tray["cpus"].push_back({{"id", c.id}, {"type", c.type}});
  for (const auto& g : s.tray.gpus) tray["gpus"].push_back({{"id", g.id}, {"type", g.type}, {"cpu", g.cpu}});
  for (const auto& n : s.tray.nics) tray["nics"].push_back({{"id", n.id}, {"type", n.type}, {"gpu", n.gpu}});
  for (const auto& l : s.tray.links) {
    json lj{{"a", l.a}, {"b", l.b}, {"type", l.type}};
    if (!l.share_group.empty()) lj["share_group"] = l.share_group;
    tray["links"].push_back(lj);
  }
  if (!tray.contains("links")) tray["links"] = json::array();
  j["tray"] = tray;
  j["rack"] = {{"trays", s.rack.trays}, {"default_racks", s.rack.default_racks}, {"source", s.rack.source}};
  if (s.rack.unit != "rack") j["rack"]["unit"] = s.rack.unit;
  if (s.rack.capped()) j["rack"]["max_racks"] = s.rack.max_racks;
  if (s.nvlink_domain) {
    const auto& d = *s.nvlink_domain;
    j["nvlink_domain"] = {{"racks", d.racks}, {"switch_trays", d.switch_trays},
                          {"chips_per_switch_tray", d.chips_per_switch_tray}, {"chip_name", d.chip_name},
                          {"gpu_links_per_chip", d.gpu_links_per_chip}, {"link_type", d.link_type},
                          {"switch_latency_us", d.switch_latency_us},
                          {"multicast_reduction", d.multicast_reduction}, {"source", d.source}};
    if (d.gpu_links_scope == GpuLinksScope::rack) {
      j["nvlink_domain"]["gpu_links_scope"] = to_string(d.gpu_links_scope);
      j["nvlink_domain"]["inter_rack_latency_us"] = d.inter_rack_latency_us;
    }
  }
  if (s.scale_out) {
    j["scale_out"] = {{"fabric", s.scale_out->fabric}, {"switch_latency_us", s.scale_out->switch_latency_us},
                      {"oversubscription", s.scale_out->oversubscription}, {"source", s.scale_out->source}};
    if (const auto& t = s.scale_out->transport)
      j["scale_out"]["transport"] = {{"name", t->name}, {"net_step_latency_us", t->net_step_latency_us},
                                     {"simple_step_overhead_us", t->simple_step_overhead_us},
                                     {"plugin_latency_us", t->plugin_latency_us}, {"source", t->source}};
  }
  return dump_json(j, 2) + "\n";
}

}  // namespace racksim
