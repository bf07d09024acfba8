#include "sim/core/parsed_file_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
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

constexpr std::string_view kMagic = "racksim parsed file\n";
constexpr const char* kWhat = "parsed-file cache entry";
// Entries not written for this long are removed when another is written (each rebuild leaves its own).
constexpr auto kStaleAfter = std::chrono::hours(24 * 7);

bool cache_enabled() {
  const char* v = std::getenv("RACKSIM_PARSE_CACHE");
  return v == nullptr || (std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0);
}

// Computed once: a readlink and two stat calls.
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
    // Entries, and temporary files a process left when it died between writing and renaming.
    if (name.rfind("parsed-", 0) != 0 || name.find(".bin") == std::string::npos) continue;
    std::error_code time_ec;
    const auto written = std::filesystem::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > kStaleAfter) std::filesystem::remove(it->path(), time_ec);
  }
}

}  // namespace

std::string parsed_cache_path(const std::string& kind, const std::string& text) {
  if (!cache_enabled() || this_build().empty()) return "";
  const std::string dir = private_runtime_dir();
  if (dir.empty()) return "";
  const std::hash<std::string_view> hash;
  return dir + "/parsed-" + kind + "-" + hex(hash(text)) + "-" + hex(hash(this_build())) + ".bin";
}

std::optional<std::string> cached_parse(const std::string& kind, const std::string& text) {
  const std::string path = parsed_cache_path(kind, text);
  std::string entry;
  if (path.empty() || !read_file(path, entry)) return std::nullopt;
  if (entry.compare(0, kMagic.size(), kMagic) != 0) return std::nullopt;
  entry.erase(0, kMagic.size());
  try {
    wire::Reader r(entry, kWhat);
    // Another build's, another kind's, or another text under the same hash: not this one.
    if (r.str() != this_build() || r.str() != kind || r.str() != text) return std::nullopt;
    std::string value = r.str();
    if (!r.done()) return std::nullopt;
    return value;
  } catch (const SimulationError&) {  // cut short: parse the text instead
    return std::nullopt;
  }
}

void cache_parse(const std::string& kind, const std::string& text, const std::string& encoded) {
  const std::string path = parsed_cache_path(kind, text);
  if (path.empty()) return;
  wire::Writer w;
  w.reserve(this_build().size() + kind.size() + text.size() + encoded.size() + 64);
  w.str(this_build());
  w.str(kind);
  w.str(text);
  w.str(encoded);
  const std::string body = w.take();
  // Its own temporary file per process and thread (the planner's threads load the systems they compare).
  static std::atomic<unsigned> writes{0};
  const std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
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
