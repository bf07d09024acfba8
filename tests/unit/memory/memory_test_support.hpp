#pragma once
// Constants of the tray-memory tests, in one place: the tests are compiled several files to a source (a unity
// build, tests/CMakeLists.txt), where two files' own definitions of the same name would clash.
#include <cstdint>

namespace racksim::memory {

inline constexpr std::uint64_t GB = 1000000000ULL;
// A GB200 GPU's HBM as the driver reports it (nvidia-smi 189471 MiB; topologies/gb200-nvl72.json): 189471 MiB =
// 198 674 743 296 B; NVIDIA's "186 GB" read as 10^9 B was 6.8 % low (issue 16).
inline constexpr std::uint64_t kHbm = 189471ULL << 20;

}  // namespace racksim::memory
