// An LD_PRELOAD shim for tests: fork() from a process with more than one thread prints one line and
// ends the process with status 86 (the child is never created). racksim must never fork an engine
// process while threads run (sim/engine/engine_process.hpp); the tests run the CLI and Python threads
// under this shim to prove it. posix_spawn does not go through fork() and is allowed.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>

namespace {
int thread_count() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}
}  // namespace

extern "C" pid_t fork(void) {
  const int threads = thread_count();
  if (threads > 1) {
    char line[160];
    const int len = std::snprintf(line, sizeof line, "fork_guard: fork() called in a process with %d threads\n", threads);
    [[maybe_unused]] const ssize_t written = write(2, line, static_cast<size_t>(len));
    _exit(86);
  }
  using Fork = pid_t (*)();
  const auto real_fork = reinterpret_cast<Fork>(dlsym(RTLD_NEXT, "fork"));
  return real_fork();
}
