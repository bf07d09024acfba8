#pragma once
// Runs one CLI request as a child process (the racksim binary itself): its own process group, stdin from
// /dev/null, stdout and stderr captured, a wall-clock limit and an address-space limit. A crash, a hang or
// a runaway allocation ends the child, never the server. Safe to call from many threads at once
// (fork + exec; every pipe is close-on-exec so one child never holds another's pipe open).
#include <cstdint>
#include <string>
#include <vector>

namespace racksim::serve {

// Whether this build runs under AddressSanitizer (make sanitize). ASan reserves terabytes of address space
// for its shadow memory before main, so an instrumented racksim cannot start under any RLIMIT_AS: every
// request of `racksim serve` ended on SIGABRT ("ReserveShadowMemoryRange failed ... ulimit -v").
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizerBuild = true;
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif

// The children's address-space limit: 4 GiB, none in an AddressSanitizer build (its children are the
// instrumented binary itself, which the limit would stop before main).
inline constexpr std::uint64_t kDefaultChildAddressSpace = kAddressSanitizerBuild ? 0 : 4ULL << 30;

struct ChildLimits {
  double wall_s = 30;                           // killed (with its process group) after this
  std::uint64_t address_space_bytes = kDefaultChildAddressSpace;  // RLIMIT_AS of the child (0: unlimited)
  std::size_t max_output_bytes = 64u << 20;     // stdout beyond this is dropped and the run fails
};

struct ChildResult {
  int exit_status = -1;      // the exit code when it exited, else -1
  int signal = 0;            // the signal that ended it, if one did
  bool timed_out = false;    // killed at the wall-clock limit
  bool output_too_large = false;
  std::string out, err;
  double wall_s = 0;
};

// Runs `program` with `args` (args[0] is argv[1]). Throws std::runtime_error only when the child cannot be
// started (pipes, fork, exec).
ChildResult run_child(const std::string& program, const std::vector<std::string>& args, const ChildLimits& limits);

}  // namespace racksim::serve
