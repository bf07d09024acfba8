#pragma once
// Internal to the engine's exact aggregation (aggregation.cpp): the run's incidence structure and its classes of
// symmetric copies, found by colour refinement (1-dimensional Weisfeiler-Leman) and checked exactly. Split from
// the quotient's construction, which reads these classes; nothing outside sim/engine includes it.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/compiled_run.hpp"
#include "sim/platform/platform_model.hpp"

namespace racksim::copy_classes {

inline std::uint64_t bits_of(double d) {
  std::uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// Compressed adjacency lists: items of i are items[offset[i] .. offset[i + 1]).
struct Csr {
  std::vector<int> offset, items;
  int begin(int i) const { return offset[i]; }
  int end(int i) const { return offset[i + 1]; }
};

// (from, to) pairs -> lists by `from`, in pair order.
Csr build_csr(int n, const std::vector<std::pair<int, int>>& pairs);

// The run's incidence structure: tasks, parts (transfers), directed links (2 * link + up) and hosts
// (dense indices into full.hosts plus multicast groups as they appear).
struct Structure {
  int tasks = 0, parts = 0, dlinks = 0, hosts = 0;
  Csr pred, succ, part_links, link_parts, host_src_parts, host_dst_parts;
  std::vector<int> part_task, part_src, part_dst;  // dense host indices
  std::vector<int> host_id;                        // dense index -> platform host id
  std::vector<double> host_speed;
  std::vector<int> host_cores;
  std::vector<int> task_size, part_size;  // size_groups of task bytes and part payloads
};

Structure structure_of(const PlatformModel& model, const CompiledRun& r);
// Longest path from a root, in tasks (uses only `tasks` and `succ` of `s`).
std::vector<int> depths(const Structure& s, const CompiledRun& r);

// A class id per task, part (transfer), directed link and host, and how many classes of each.
struct Partition {
  std::vector<int> task, part, link, host;
  int tasks = 0, parts = 0, links = 0, hosts = 0;
  int total() const { return tasks + parts + links + hosts; }
};

// The coarsest equitable partition of the run (classes of copies), or an empty one with `why_not` set when the
// classes do not settle within their round limit or do not shrink the run by half. `seed_chains`: start from the
// tasks' chain hashes (invariants of that partition, copy_classes.cpp), which changes only the rounds it takes
// (off: for the test that says so); `rounds`, when given, receives them.
Partition refine(const Structure& s, const CompiledRun& r, const PlatformModel& model, std::string& why_not,
                 bool seed_chains = true, int* rounds = nullptr);
// Whether the partition is equitable exactly (refine's hashes could collide).
bool verify(const Structure& s, const CompiledRun& r, const PlatformModel& model, const Partition& part);

}  // namespace racksim::copy_classes
