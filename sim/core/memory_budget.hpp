#pragma once
// How much memory one racksim request may plan to use (issue 14): the smallest of a stated budget
// (8 GiB, or RACKSIM_MEMORY_BUDGET such as "2G" or "512M"), the machine's physical memory (MemTotal in
// /proc/meminfo), the process's address-space and data limits (RLIMIT_AS, RLIMIT_DATA) and the cgroup's
// memory.max. MemTotal rather than MemAvailable: the answer must not change with what other processes
// happen to hold, or the same request would run once and be refused the next time. Requests whose
// estimate (graph, schedule) is over it are refused before anything large is built.
#include <cstdint>
#include <string>

namespace racksim {

inline constexpr std::uint64_t kDefaultMemoryBudgetBytes = 8ULL << 30;  // the 8 GiB

struct MemoryBudget {
  std::uint64_t bytes = kDefaultMemoryBudgetBytes;
  std::string basis;  // what set it, e.g. "racksim's 8 GiB budget (RACKSIM_MEMORY_BUDGET)"
  // "8192 MB (racksim's 8 GiB budget; ...)", for messages.
  std::string describe() const;
};

// Computed once per process (the environment and limits are read on the first call).
const MemoryBudget& memory_budget();

// Megabytes (1e6 bytes) with no decimals, for estimates in messages: "670 MB".
std::string format_MB(double bytes);

}  // namespace racksim
