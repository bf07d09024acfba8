#include "sim/calib/calibration_cache.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/parsed_file_cache.hpp"
#include "sim/core/wire.hpp"

namespace racksim {

namespace {

using wire::Reader;
using wire::Writer;

// Each struct's size at the time its encoder below was written: a field added to one of them fails the
// build here until encode and decode carry it too (a field left out would come back as its default, a
// silently different calibration).
static_assert(sizeof(FitSummary) == 80, "FitSummary changed: update encode_fit/decode_fit");
static_assert(sizeof(LinkCalibration) == 128, "LinkCalibration changed: update encode_link/decode_link");
static_assert(sizeof(AlgorithmCalibration) == 232, "AlgorithmCalibration changed: update encode_algo/decode_algo");
static_assert(sizeof(ProtocolCalibration) == 120, "ProtocolCalibration changed: update encode_protocol/decode_protocol");
static_assert(sizeof(Calibration) == 400, "Calibration changed: update encode_calibration/decode_calibration");

constexpr const char* kWhat = "cached calibration";
constexpr const char* kKind = "calibration";

void encode_fit(Writer& w, const FitSummary& f) {
  w.pod(f.points);
  w.pod(f.median_abs_error);
  w.pod(f.worst_abs_error);
  w.pod(f.rms_log_residual);
  w.strs(f.data);
  w.strs(f.notes);
}
FitSummary decode_fit(Reader& r) {
  FitSummary f;
  f.points = r.pod<int>();
  f.median_abs_error = r.pod<double>();
  f.worst_abs_error = r.pod<double>();
  f.rms_log_residual = r.pod<double>();
  f.data = r.strs();
  f.notes = r.strs();
  return f;
}

void encode_link(Writer& w, const LinkCalibration& l) {
  w.pod(l.bandwidth_efficiency);
  w.pod(l.extra_latency_us);
  w.str(l.source);
  encode_fit(w, l.fit);
}
LinkCalibration decode_link(Reader& r) {
  LinkCalibration l;
  l.bandwidth_efficiency = r.pod<double>();
  l.extra_latency_us = r.pod<double>();
  l.source = r.str();
  l.fit = decode_fit(r);
  return l;
}

void encode_algo(Writer& w, const AlgorithmCalibration& a) {
  w.pod(a.launch_overhead_us);
  w.pod(a.step_overhead_us);
  w.pod(a.bandwidth_efficiency);
  w.pod(a.half_efficiency_bytes);
  w.str(a.source);
  encode_fit(w, a.fit);
  w.pod(a.scale_out_launch_us_per_8_gpus);
  w.pod(a.launch_us_per_8_gpus);
  w.pod(a.scale_out_hop_overhead_us);
  w.pod(a.ramp_bytes_per_gpu);
  w.str(a.borrowed_from);
  w.pod(a.p2p_pipeline_GBps);
  w.pod(a.qp_line_fraction);
  w.pod(a.ring_copy_GBps);
}
AlgorithmCalibration decode_algo(Reader& r) {
  AlgorithmCalibration a;
  a.launch_overhead_us = r.pod<double>();
  a.step_overhead_us = r.pod<double>();
  a.bandwidth_efficiency = r.pod<double>();
  a.half_efficiency_bytes = r.pod<double>();
  a.source = r.str();
  a.fit = decode_fit(r);
  a.scale_out_launch_us_per_8_gpus = r.pod<double>();
  a.launch_us_per_8_gpus = r.pod<double>();
  a.scale_out_hop_overhead_us = r.pod<double>();
  a.ramp_bytes_per_gpu = r.pod<double>();
  a.borrowed_from = r.str();
  a.p2p_pipeline_GBps = r.pod<double>();
  a.qp_line_fraction = r.pod<double>();
  a.ring_copy_GBps = r.pod<double>();
  return a;
}

void encode_protocols(Writer& w, const std::map<std::string, ProtocolCalibration>& protocols) {
  w.pod<std::uint64_t>(protocols.size());
  for (const auto& [name, pc] : protocols) {
    w.str(name);
    w.pod(pc.network_efficiency);
    w.str(pc.source);
    encode_fit(w, pc.fit);
  }
}
std::map<std::string, ProtocolCalibration> decode_protocols(Reader& r) {
  std::map<std::string, ProtocolCalibration> protocols;
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string name = r.str();
    ProtocolCalibration pc;
    pc.network_efficiency = r.pod<double>();
    pc.source = r.str();
    pc.fit = decode_fit(r);
    protocols[std::move(name)] = std::move(pc);
  }
  return protocols;
}

// Link kinds by name, so that the encoding does not depend on the enum's order.
void encode_links(Writer& w, const std::map<LinkKind, LinkCalibration>& links) {
  w.pod<std::uint64_t>(links.size());
  for (const auto& [kind, l] : links) {
    w.str(to_string(kind));
    encode_link(w, l);
  }
}
std::map<LinkKind, LinkCalibration> decode_links(Reader& r) {
  std::map<LinkKind, LinkCalibration> links;
  for (std::uint64_t n = r.count(); n > 0; --n) {
    const std::optional<LinkKind> kind = link_kind_from_string(r.str());
    if (!kind) throw SimulationError(std::string("internal: an unknown link kind in a ") + kWhat);
    links[*kind] = decode_link(r);
  }
  return links;
}

void encode_algos(Writer& w, const std::map<std::string, AlgorithmCalibration>& algos) {
  w.pod<std::uint64_t>(algos.size());
  for (const auto& [key, a] : algos) {
    w.str(key);
    encode_algo(w, a);
  }
}
std::map<std::string, AlgorithmCalibration> decode_algos(Reader& r) {
  std::map<std::string, AlgorithmCalibration> algos;
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string key = r.str();
    algos[std::move(key)] = decode_algo(r);
  }
  return algos;
}

void encode_into(Writer& w, const Calibration& c) {
  w.str(c.name);
  w.str(c.source);
  encode_links(w, c.links);
  encode_algos(w, c.algorithms);
  w.pod<std::uint64_t>(c.arch_links.size());
  for (const auto& [arch, links] : c.arch_links) {
    w.str(arch);
    encode_links(w, links);
  }
  w.pod<std::uint64_t>(c.arch_algorithms.size());
  for (const auto& [arch, algos] : c.arch_algorithms) {
    w.str(arch);
    encode_algos(w, algos);
  }
  encode_protocols(w, c.protocols);
  w.pod<std::uint64_t>(c.arch_protocols.size());
  for (const auto& [arch, protocols] : c.arch_protocols) {
    w.str(arch);
    encode_protocols(w, protocols);
  }
  w.pod<std::uint64_t>(c.memory.size());
  for (const auto& [key, l] : c.memory) {
    w.str(key);
    encode_link(w, l);
  }
}
Calibration decode_from(Reader& r) {
  Calibration c;
  c.name = r.str();
  c.source = r.str();
  c.links = decode_links(r);
  c.algorithms = decode_algos(r);
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string arch = r.str();
    c.arch_links[std::move(arch)] = decode_links(r);
  }
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string arch = r.str();
    c.arch_algorithms[std::move(arch)] = decode_algos(r);
  }
  c.protocols = decode_protocols(r);
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string arch = r.str();
    c.arch_protocols[std::move(arch)] = decode_protocols(r);
  }
  for (std::uint64_t n = r.count(); n > 0; --n) {
    std::string key = r.str();
    c.memory[std::move(key)] = decode_link(r);
  }
  if (!r.done()) throw SimulationError(std::string("internal: trailing bytes in a ") + kWhat);
  return c;
}

}  // namespace

std::string encode_calibration(const Calibration& calibration) {
  Writer w;
  encode_into(w, calibration);
  return w.take();
}

Calibration decode_calibration(const std::string& bytes) {
  Reader r(bytes, kWhat);
  return decode_from(r);
}

std::string calibration_cache_path(const std::string& text) { return parsed_cache_path(kKind, text); }

std::optional<Calibration> cached_calibration(const std::string& text) { return cached_value(kKind, text, decode_calibration); }

void cache_calibration(const std::string& text, const Calibration& calibration) {
  cache_value(kKind, text, [&] { return encode_calibration(calibration); });
}

}  // namespace racksim
