#pragma once
// A value made from a file, made again only when the file's identity changes (path, inode, size and
// modification time: file_identity in private_dir.hpp). For files read on every call of a hot path whose
// parse is kept anyway: the shipped calibration and held-out table, which every engine run's result quotes
// (sim/calib/heldout_errors.cpp); a stat replaces reading and comparing the whole text. Rewriting a file in
// place changes its modification time (nanoseconds), replacing it by a rename changes its inode: either way the
// next call makes the value again. A file that cannot be stat'ed is never kept: `make` runs every time (and
// reports the file's problem itself).
#include <mutex>
#include <string>
#include <utility>

#include "sim/core/private_dir.hpp"

namespace racksim {

template <class T>
class FileMemo {
 public:
  // The value `make()` gave for the file at `path` as it is now: kept from an earlier call while the
  // file's identity is the same. Thread-safe; `make` runs outside the lock.
  template <class Make>
  T get(const std::string& path, Make make) {
    const std::string identity = file_identity(path);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (kept_ && !identity.empty() && identity == identity_) return value_;
    }
    T value = make();
    std::lock_guard<std::mutex> lock(mutex_);
    identity_ = identity;
    value_ = value;
    kept_ = !identity.empty();
    return value;
  }

 private:
  std::mutex mutex_;
  std::string identity_;
  T value_{};
  bool kept_ = false;
};

}  // namespace racksim
