#include "sim/core/memory_budget.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/errors.hpp"
#include "sim/core/units.hpp"

namespace racksim {

namespace {

// MemTotal from /proc/meminfo in bytes, 0 when unreadable.
std::uint64_t mem_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemTotal:") return kb * 1024;
  return 0;
}

// cgroup v2 memory.max of this process's cgroup (the root file stands for it inside a container), 0 when
// unlimited or unreadable.
std::uint64_t cgroup_max_bytes() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

std::uint64_t rlimit_bytes(int resource) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::uint64_t>(r.rlim_cur);
}

MemoryBudget compute_budget() {
  MemoryBudget b;
  b.bytes = kDefaultMemoryBudgetBytes;
  b.basis = "racksim's 8 GiB budget";
  if (const char* env = std::getenv("RACKSIM_MEMORY_BUDGET"); env && *env) {
    try {
      const std::uint64_t bytes = units::parse_bytes(env, "RACKSIM_MEMORY_BUDGET");
      if (bytes == 0) throw InputError("RACKSIM_MEMORY_BUDGET", "", "0", "a positive size");
      b.bytes = bytes;
      b.basis = std::string("RACKSIM_MEMORY_BUDGET=") + one_line(env, 40);
    } catch (const InputError&) {
      // A bad value keeps the default; the basis says so rather than failing every command.
      b.basis += " (RACKSIM_MEMORY_BUDGET='" + one_line(env, 40) + "' not understood)";
    }
  }
  const auto lower = [&](std::uint64_t limit, const std::string& what) {
    if (limit > 0 && limit < b.bytes) {
      b.bytes = limit;
      b.basis = what;
    }
  };
  lower(mem_total_bytes(), "the machine's MemTotal");
  lower(cgroup_max_bytes(), "the cgroup's memory.max");
  lower(rlimit_bytes(RLIMIT_AS), "RLIMIT_AS (ulimit -v)");
  lower(rlimit_bytes(RLIMIT_DATA), "RLIMIT_DATA (ulimit -d)");
  return b;
}

}  // namespace

std::string format_MB(double bytes) {
  std::ostringstream out;
  out.precision(0);
  out << std::fixed << std::max(0.0, bytes / 1e6) << " MB";
  return out.str();
}

std::string MemoryBudget::describe() const { return format_MB(static_cast<double>(bytes)) + " (" + basis + ")"; }

const MemoryBudget& memory_budget() {
  static const MemoryBudget budget = compute_budget();
  return budget;
}

}  // namespace racksim
