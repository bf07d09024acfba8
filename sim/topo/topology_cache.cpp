#include "sim/topo/topology_cache.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/parsed_file_cache.hpp"
#include "sim/core/wire.hpp"

namespace racksim {

namespace {

using wire::Reader;
using wire::Writer;

// Each struct's size when its encoder below was written: a field added fails the build here until encode and
// decode carry it too (a field left out would come back as its default: a silently different system).
static_assert(sizeof(GpuType) == 136, "GpuType changed: update put/get below");
static_assert(sizeof(CpuType) == 216, "CpuType changed: update put/get below");
static_assert(sizeof(NicType) == 112, "NicType changed: update put/get below");
static_assert(sizeof(LinkType) == 96, "LinkType changed: update put/get below");
static_assert(sizeof(TrayCpu) == 64, "TrayCpu changed: update put/get below");
static_assert(sizeof(TrayGpu) == 96, "TrayGpu changed: update put/get below");
static_assert(sizeof(TrayNic) == 96, "TrayNic changed: update put/get below");
static_assert(sizeof(TrayLink) == 128, "TrayLink changed: update put/get below");
static_assert(sizeof(TraySpec) == 160, "TraySpec changed: update put/get below");
static_assert(sizeof(RackSpec) == 80, "RackSpec changed: update put/get below");
static_assert(sizeof(NvlinkDomainSpec) == 160, "NvlinkDomainSpec changed: update put/get below");
static_assert(sizeof(NetTransportSpec) == 88, "NetTransportSpec changed: update put/get below");
static_assert(sizeof(ScaleOutSpec) == 176, "ScaleOutSpec changed: update put/get below");
static_assert(sizeof(TopologySpec) == 808, "TopologySpec changed: update encode_topology/decode_topology");

constexpr const char* kWhat = "cached topology";
constexpr const char* kKind = "topology";

void put(Writer& w, const GpuType& g) {
  w.str(g.id);
  w.str(g.name);
  w.pod(g.hbm_capacity_bytes);
  w.pod(g.hbm_marketed_GB);
  w.pod(g.hbm_bandwidth_GBps);
  w.pod(g.sm_count);
  w.pod(g.nvlink_ports);
  w.pod(g.compute_capability);
  w.pod<std::uint8_t>(g.integrated ? 1 : 0);
  w.str(g.source);
}
void get(Reader& r, GpuType& g) {
  g.id = r.str();
  g.name = r.str();
  g.hbm_capacity_bytes = r.pod<std::uint64_t>();
  g.hbm_marketed_GB = r.pod<double>();
  g.hbm_bandwidth_GBps = r.pod<double>();
  g.sm_count = r.pod<int>();
  g.nvlink_ports = r.pod<int>();
  g.compute_capability = r.pod<int>();
  g.integrated = r.pod<std::uint8_t>() != 0;
  g.source = r.str();
}

void put(Writer& w, const CpuType& c) {
  w.str(c.id);
  w.str(c.name);
  w.pod(c.cores);
  w.str(c.isa);
  w.str(c.vendor);
  w.str(c.memory_kind);
  w.pod(c.memory_capacity_GB);
  w.pod(c.memory_bandwidth_GBps);
  w.str(c.source);
}
void get(Reader& r, CpuType& c) {
  c.id = r.str();
  c.name = r.str();
  c.cores = r.pod<int>();
  c.isa = r.str();
  c.vendor = r.str();
  c.memory_kind = r.str();
  c.memory_capacity_GB = r.pod<double>();
  c.memory_bandwidth_GBps = r.pod<double>();
  c.source = r.str();
}

void put(Writer& w, const NicType& n) {
  w.str(n.id);
  w.str(n.name);
  w.pod(n.bandwidth_GBps);
  w.pod(n.latency_us);
  w.str(n.source);
}
void get(Reader& r, NicType& n) {
  n.id = r.str();
  n.name = r.str();
  n.bandwidth_GBps = r.pod<double>();
  n.latency_us = r.pod<double>();
  n.source = r.str();
}

// Link kinds by name, so that the encoding does not depend on the enum's order.
void put(Writer& w, const LinkType& l) {
  w.str(l.id);
  w.str(to_string(l.kind));
  w.pod(l.bandwidth_GBps);
  w.pod(l.latency_us);
  w.pod(l.lanes);
  w.str(l.source);
}
void get(Reader& r, LinkType& l) {
  l.id = r.str();
  const std::optional<LinkKind> kind = link_kind_from_string(r.str());
  if (!kind) throw SimulationError(std::string("internal: an unknown link kind in a ") + kWhat);
  l.kind = *kind;
  l.bandwidth_GBps = r.pod<double>();
  l.latency_us = r.pod<double>();
  l.lanes = r.pod<int>();
  l.source = r.str();
}

void put(Writer& w, const TrayCpu& c) {
  w.str(c.id);
  w.str(c.type);
}
void get(Reader& r, TrayCpu& c) {
  c.id = r.str();
  c.type = r.str();
}
void put(Writer& w, const TrayGpu& g) {
  w.str(g.id);
  w.str(g.type);
  w.str(g.cpu);
}
void get(Reader& r, TrayGpu& g) {
  g.id = r.str();
  g.type = r.str();
  g.cpu = r.str();
}
void put(Writer& w, const TrayNic& n) {
  w.str(n.id);
  w.str(n.type);
  w.str(n.gpu);
}
void get(Reader& r, TrayNic& n) {
  n.id = r.str();
  n.type = r.str();
  n.gpu = r.str();
}
void put(Writer& w, const TrayLink& l) {
  w.str(l.a);
  w.str(l.b);
  w.str(l.type);
  w.str(l.share_group);
}
void get(Reader& r, TrayLink& l) {
  l.a = r.str();
  l.b = r.str();
  l.type = r.str();
  l.share_group = r.str();
}

template <class T>
void put_list(Writer& w, const std::vector<T>& list) {
  w.pod<std::uint64_t>(list.size());
  for (const T& item : list) put(w, item);
}
template <class T>
std::vector<T> get_list(Reader& r) {
  std::vector<T> list(r.count());
  for (T& item : list) get(r, item);
  return list;
}

void put(Writer& w, const TraySpec& t) {
  w.str(t.name);
  put_list(w, t.cpus);
  put_list(w, t.gpus);
  put_list(w, t.nics);
  put_list(w, t.links);
  w.str(t.source);
}
void get(Reader& r, TraySpec& t) {
  t.name = r.str();
  t.cpus = get_list<TrayCpu>(r);
  t.gpus = get_list<TrayGpu>(r);
  t.nics = get_list<TrayNic>(r);
  t.links = get_list<TrayLink>(r);
  t.source = r.str();
}

void put(Writer& w, const RackSpec& k) {
  w.pod(k.trays);
  w.pod(k.default_racks);
  w.pod(k.max_racks);
  w.str(k.unit);
  w.str(k.source);
}
void get(Reader& r, RackSpec& k) {
  k.trays = r.pod<int>();
  k.default_racks = r.pod<int>();
  k.max_racks = r.pod<int>();
  k.unit = r.str();
  k.source = r.str();
}

void put(Writer& w, const NvlinkDomainSpec& d) {
  w.pod(d.racks);
  w.pod(d.switch_trays);
  w.pod(d.chips_per_switch_tray);
  w.str(d.chip_name);
  w.pod<std::uint64_t>(d.gpu_links_per_chip.size());
  for (int links : d.gpu_links_per_chip) w.pod(links);
  w.str(d.link_type);
  w.pod(d.switch_latency_us);
  w.pod<std::uint8_t>(d.multicast_reduction ? 1 : 0);
  w.pod<std::uint8_t>(d.gpu_links_scope == GpuLinksScope::rack ? 1 : 0);
  w.pod(d.inter_rack_latency_us);
  w.str(d.source);
}
void get(Reader& r, NvlinkDomainSpec& d) {
  d.racks = r.pod<int>();
  d.switch_trays = r.pod<int>();
  d.chips_per_switch_tray = r.pod<int>();
  d.chip_name = r.str();
  d.gpu_links_per_chip.resize(r.count());
  for (int& links : d.gpu_links_per_chip) links = r.pod<int>();
  d.link_type = r.str();
  d.switch_latency_us = r.pod<double>();
  d.multicast_reduction = r.pod<std::uint8_t>() != 0;
  d.gpu_links_scope = r.pod<std::uint8_t>() != 0 ? GpuLinksScope::rack : GpuLinksScope::domain;
  d.inter_rack_latency_us = r.pod<double>();
  d.source = r.str();
}

void put(Writer& w, const NetTransportSpec& t) {
  w.str(t.name);
  w.pod(t.net_step_latency_us);
  w.pod(t.simple_step_overhead_us);
  w.pod(t.plugin_latency_us);
  w.str(t.source);
}
void get(Reader& r, NetTransportSpec& t) {
  t.name = r.str();
  t.net_step_latency_us = r.pod<double>();
  t.simple_step_overhead_us = r.pod<double>();
  t.plugin_latency_us = r.pod<double>();
  t.source = r.str();
}

void put(Writer& w, const ScaleOutSpec& s);  // found by the templates below, defined after them
void get(Reader& r, ScaleOutSpec& s);

template <class T>
void put_optional(Writer& w, const std::optional<T>& value) {
  w.pod<std::uint8_t>(value ? 1 : 0);
  if (value) put(w, *value);
}
template <class T>
std::optional<T> get_optional(Reader& r) {
  if (r.pod<std::uint8_t>() == 0) return std::nullopt;
  T value;
  get(r, value);
  return value;
}

void put(Writer& w, const ScaleOutSpec& s) {
  w.str(s.fabric);
  w.pod(s.switch_latency_us);
  w.pod(s.oversubscription);
  put_optional(w, s.transport);
  w.str(s.source);
}
void get(Reader& r, ScaleOutSpec& s) {
  s.fabric = r.str();
  s.switch_latency_us = r.pod<double>();
  s.oversubscription = r.pod<double>();
  s.transport = get_optional<NetTransportSpec>(r);
  s.source = r.str();
}

}  // namespace

std::string encode_topology(const TopologySpec& s) {
  Writer w;
  w.pod(s.schema_version);
  w.str(s.id);
  w.str(s.description);
  w.pod<std::uint64_t>(s.references.size());
  for (const auto& [key, citation] : s.references) {
    w.str(key);
    w.str(citation);
  }
  put_list(w, s.gpu_types);
  put_list(w, s.cpu_types);
  put_list(w, s.nic_types);
  put_list(w, s.link_types);
  put(w, s.tray);
  put(w, s.rack);
  put_optional(w, s.nvlink_domain);
  put_optional(w, s.scale_out);
  return w.take();
}

TopologySpec decode_topology(const std::string& bytes) {
  Reader r(bytes, kWhat);
  TopologySpec s;
  s.schema_version = r.pod<int>();
  s.id = r.str();
  s.description = r.str();
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string key = r.str();
    s.references[std::move(key)] = r.str();
  }
  s.gpu_types = get_list<GpuType>(r);
  s.cpu_types = get_list<CpuType>(r);
  s.nic_types = get_list<NicType>(r);
  s.link_types = get_list<LinkType>(r);
  get(r, s.tray);
  get(r, s.rack);
  s.nvlink_domain = get_optional<NvlinkDomainSpec>(r);
  s.scale_out = get_optional<ScaleOutSpec>(r);
  if (!r.done()) throw SimulationError(std::string("internal: trailing bytes in a ") + kWhat);
  return s;
}

std::string topology_cache_path(const std::string& text) { return parsed_cache_path(kKind, text); }

std::optional<TopologySpec> cached_topology(const std::string& text) { return cached_value(kKind, text, decode_topology); }

void cache_topology(const std::string& text, const TopologySpec& spec) {
  cache_value(kKind, text, [&] { return encode_topology(spec); });
}

}  // namespace racksim
