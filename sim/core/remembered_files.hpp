#pragma once
// The last few JSON files a process read, each with the value it gave: an engine request can then carry a
// file's own text while the value is still what that text gives (compared with the value's ==, field by
// field) instead of serialising it again (~0.45 ms for the shipped 50 KB calibration per CLI call).
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace racksim {

template <class Value>
class RememberedFiles {
 public:
  void remember(const Value& value, std::string text) {
    std::lock_guard<std::mutex> lock(mutex_);
    files_.emplace_back(value, std::move(text));
    if (files_.size() > kFiles) files_.pop_front();
  }
  // The text of the latest file that gave `value`, if any.
  std::optional<std::string> text_of(const Value& value) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = files_.rbegin(); it != files_.rend(); ++it)
      if (it->first == value) return it->second;
    return std::nullopt;
  }
  // The value the latest file with exactly this text gave, if any: the same text parses to the same value
  // (a file's path only names it in error messages), so a file read twice in a process is parsed once (the
  // shipped calibration: once for the run, once more to tell whether a result may quote the held-out
  // errors measured with it, ~0.6 ms of an 8-GPU CLI call).
  std::optional<Value> value_of(const std::string& text) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = files_.rbegin(); it != files_.rend(); ++it)
      if (it->second == text) return it->first;
    return std::nullopt;
  }
  // What `text` gives, from where it is cheapest: this process's earlier parse of it, else `cached(text)` (an
  // earlier process's: sim/core/parsed_file_cache.hpp), else `parse(text)`, which `cache` then keeps for the next
  // process. Remembered with its text either way.
  template <class Parse>
  Value value_for(std::string text, std::optional<Value> (*cached)(const std::string&),
                  void (*cache)(const std::string&, const Value&), Parse parse) {
    if (std::optional<Value> seen = value_of(text)) return std::move(*seen);
    std::optional<Value> value = cached(text);
    if (!value) {
      value = parse(static_cast<const std::string&>(text));
      cache(text, *value);
    }
    remember(*value, std::move(text));
    return std::move(*value);
  }

 private:
  static constexpr std::size_t kFiles = 8;  // a Python session may read many; the latest few are the ones reused
  mutable std::mutex mutex_;
  std::deque<std::pair<Value, std::string>> files_;
};

}  // namespace racksim
