#pragma once
// Transparent huge pages for malloc'd memory in racksim's own processes (issue 14, "the fixed costs of a call").
//
// A large run builds hundreds of MB of schedules, flows and engine state, and each 4 KiB page costs a page fault
// on first touch. Paravirtualised VMs make those faults slow: on session 9's VM, 28 % of a 4 608-GPU
// all-reduce's engine CPU time went to first-touch faults (194 000 of them). glibc 2.35+ can advise the kernel to
// back malloc's arenas with 2 MiB pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, madvise mode; Debian 12 has
// glibc 2.36 and its kernels default THP to "madvise"). It cuts the engine's faults 9x and the run from 2.79
// to 0.96 s (docs/performance.md). The tunable is read once, when a process starts, so:
//   * the engine processes (racksim-engine --serve / --daemon) are spawned with it (environment_for_engine);
//   * the CLI re-executes itself with it once, before parsing, when the command can be large
//     (reexec_with_hugepage_malloc);
//   * every other CLI call (a small collective: the exec would cost more than it saves) backs the first
//     few MiB of its heap with huge pages in its own process (heap_on_huge_pages).
// Results are the same to the byte (only where memory lives changes). RACKSIM_HUGEPAGES=off leaves every
// process as it was; a GLIBC_TUNABLES that already names glibc.malloc.hugetlb is kept as given.
#include <cstddef>
#include <string>
#include <vector>

namespace racksim {

// GLIBC_TUNABLES with glibc.malloc.hugetlb=1 added to `current` (nullptr: unset). Returns `current` unchanged
// when it already sets glibc.malloc.hugetlb.
std::string tunables_with_hugepage_malloc(const char* current);

// What the CLI re-executes itself with: tunables_with_hugepage_malloc(current) and, unless `current` names them,
// malloc thresholds that keep freed memory in the heap (hugepage_malloc.cpp says why). Unchanged when
// `current` already sets glibc.malloc.hugetlb (then no re-exec happens anyway).
std::string cli_tunables(const char* current);

// False when RACKSIM_HUGEPAGES is "off" or "0", or GLIBC_TUNABLES already sets glibc.malloc.hugetlb.
bool hugepage_malloc_wanted();

// This process's environment with the tunable added (when wanted), as NAME=VALUE strings, and the
// nullptr-terminated array posix_spawn takes (pointing into `storage`).
struct SpawnEnvironment {
  std::vector<std::string> storage;
  std::vector<char*> envp;
};
SpawnEnvironment environment_for_engine();

// When wanted: sets GLIBC_TUNABLES and replaces this process with a fresh run of the same executable and
// arguments (execv of /proc/self/exe). Returns only when nothing was done or the exec failed (the run then
// goes on as it is). Call first thing in main, before any thread or allocation worth keeping.
void reexec_with_hugepage_malloc(char** argv);

// When wanted: grows this process's malloc heap (glibc's main arena) once by about `bytes`, keeps that much
// when memory is freed (M_TOP_PAD), and advises huge pages on its 2 MiB-aligned part (MADV_HUGEPAGE), what
// glibc.malloc.hugetlb=1 does for every growth, without re-executing; blocks up to 32 MiB then come from the heap
// and freed memory is not trimmed below 1 GiB (cli_tunables' thresholds). Later growth takes 4 KiB pages as before.
// Returns the bytes advised (0: not wanted, or the kernel or allocator declined; the run goes on either way).
std::size_t heap_on_huge_pages(std::size_t bytes);

}  // namespace racksim
