#include "sim/calib/calibration_cache.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string_view>

#include "sim/core/errors.hpp"
#include "sim/core/private_dir.hpp"
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
static_assert(sizeof(AlgorithmCalibration) == 200, "AlgorithmCalibration changed: update encode_algo/decode_algo");
static_assert(sizeof(Calibration) == 256, "Calibration changed: update encode_calibration/decode_calibration");

constexpr const char* kWhat = "parsed-calibration cache entry";
constexpr std::string_view kMagic = "racksim parsed calibration\n";
// Entries not written for this long are removed when another is written (each rebuild leaves its own).
constexpr auto kStaleAfter = std::chrono::hours(24 * 7);

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
  w.pod(a.scale_out_launch_overhead_us);
  w.pod(a.scale_out_hop_overhead_us);
  w.pod(a.ramp_bytes_per_gpu);
  w.str(a.borrowed_from);
}
AlgorithmCalibration decode_algo(Reader& r) {
  AlgorithmCalibration a;
  a.launch_overhead_us = r.pod<double>();
  a.step_overhead_us = r.pod<double>();
  a.bandwidth_efficiency = r.pod<double>();
  a.half_efficiency_bytes = r.pod<double>();
  a.source = r.str();
  a.fit = decode_fit(r);
  a.scale_out_launch_overhead_us = r.pod<double>();
  a.scale_out_hop_overhead_us = r.pod<double>();
  a.ramp_bytes_per_gpu = r.pod<double>();
  a.borrowed_from = r.str();
  return a;
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
  if (!r.done()) throw SimulationError(std::string("internal: trailing bytes in a ") + kWhat);
  return c;
}

bool cache_enabled() {
  const char* v = std::getenv("RACKSIM_CALIBRATION_CACHE");
  return v == nullptr || (std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0);
}

// Computed once: two stat calls and a readlink.
const std::string& this_build() {
  static const std::string identity = build_identity();
  return identity;
}

std::string hex(std::size_t h) {
  char out[17];
  std::snprintf(out, sizeof out, "%016zx", h);
  return out;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size <= 0) return false;
  out.resize(static_cast<std::size_t>(size));
  in.seekg(0, std::ios::beg);
  return static_cast<bool>(in.read(out.data(), size));
}

void remove_stale_entries(const std::filesystem::path& dir) {
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("calibration-", 0) != 0 || name.size() < 4 || name.compare(name.size() - 4, 4, ".bin") != 0) continue;
    std::error_code time_ec;
    const auto written = std::filesystem::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > kStaleAfter) std::filesystem::remove(it->path(), time_ec);
  }
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

std::string calibration_cache_path(const std::string& text) {
  if (!cache_enabled() || this_build().empty()) return "";
  const std::string dir = private_runtime_dir();
  if (dir.empty()) return "";
  const std::hash<std::string_view> hash;
  return dir + "/calibration-" + hex(hash(text)) + "-" + hex(hash(this_build())) + ".bin";
}

std::optional<Calibration> cached_calibration(const std::string& text) {
  const std::string path = calibration_cache_path(text);
  std::string entry;
  if (path.empty() || !read_file(path, entry)) return std::nullopt;
  if (entry.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  const std::string body = entry.substr(kMagic.size());
  try {
    Reader r(body, kWhat);
    if (r.str() != this_build() || r.str() != text) return std::nullopt;  // another build's, or a hash collision
    return decode_from(r);
  } catch (const SimulationError&) {  // cut short or corrupt: parse the text instead
    return std::nullopt;
  }
}

void cache_calibration(const std::string& text, const Calibration& calibration) {
  const std::string path = calibration_cache_path(text);
  if (path.empty()) return;
  Writer w;
  w.reserve(2 * text.size() + 4096);
  w.str(this_build());
  w.str(text);
  encode_into(w, calibration);
  const std::string body = w.take();
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);  // whole or not at all for a reader
  if (ec) {
    std::filesystem::remove(temporary, ec);
    return;
  }
  remove_stale_entries(std::filesystem::path(path).parent_path());
}

}  // namespace racksim
