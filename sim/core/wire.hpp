#pragma once
// The binary encoding both ends of the engine's pipes share (engine requests, result_wire.hpp's results),
// and the parsed-file cache (sim/core/parsed_file_cache.hpp): fixed-size fields as their bytes,
// strings and lists after a 64-bit count. Only racksim's own processes of the same build read it (the
// engine server and the cache are keyed by the build: private_dir.hpp), so no versioning.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/core/errors.hpp"

namespace racksim::wire {

class Writer {
 public:
  template <typename T>
  void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    out_.append(s);
  }
  void strs(const std::vector<std::string>& list) {
    pod<std::uint64_t>(list.size());
    for (const auto& s : list) str(s);
  }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Writer wrote; a message cut short is a SimulationError naming `what` ("result from the
// engine process"), never a read past the end.
class Reader {
 public:
  Reader(const std::string& in, const char* what) : in_(in), what_(what) {}
  template <typename T>
  T pod() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // Steps over a string without copying it.
  void skip_str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    pos_ += n;
  }
  void skip_strs() {
    for (std::uint64_t i = 0, n = count(); i < n; ++i) skip_str();
  }
  std::vector<std::string> strs() {
    std::vector<std::string> list(count());
    for (auto& s : list) s = str();
    return list;
  }
  // A list's length, refused when it could not fit in what is left (a corrupt count allocates nothing).
  std::uint64_t count() {
    const auto n = pod<std::uint64_t>();
    if (n > in_.size()) fail();
    return n;
  }
  std::size_t position() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - pos_) fail();
  }
  [[noreturn]] void fail() const { throw SimulationError(std::string("internal: truncated ") + what_); }
  const std::string& in_;
  const char* what_;
  std::size_t pos_ = 0;
};

}  // namespace racksim::wire
