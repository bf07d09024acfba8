// racksim-engine: the engine server (sim/engine/engine_server.hpp). Not a command for users.
//   --serve          a multi-threaded process that uses the racksim library (a Jupyter kernel, Python
//                    threads) starts it with posix_spawn and sends it runs over the socket at fd 3; it forks
//                    the engine processes that the threaded caller must not fork itself.
//   --daemon PATH [IDLE_SECONDS]
//                    the warm engine daemon of the `racksim` CLI (built without SimGrid, issue 14): forks
//                    the daemon (a new session), which listens on PATH, and exits once it listens.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sim/engine/engine_server.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--serve") == 0) return racksim::serve_engine_requests(3, 3);
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "--daemon") == 0) {
    int idle_s = racksim::kDaemonIdleSeconds;
    if (argc == 4) {
      char* end = nullptr;
      const long v = std::strtol(argv[3], &end, 10);
      if (end == argv[3] || *end != '\0' || v < 1 || v > 3600) {
        std::fprintf(stderr, "racksim-engine: --daemon PATH [IDLE_SECONDS]: idle seconds '%s' is not 1-3600\n", argv[3]);
        return 2;
      }
      idle_s = static_cast<int>(v);
    }
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) return 1;
    const pid_t pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      ::close(ready[0]);
      // Nothing of the caller's stays open for the daemon's lifetime (a test harness's pipe, a make
      // jobserver's): stdin/out/err are /dev/null already (the client's spawn), the rest is closed.
      if (ready[1] > 3) ::close_range(3, static_cast<unsigned>(ready[1]) - 1, 0);
      ::close_range(static_cast<unsigned>(ready[1]) + 1, ~0U, 0);
      ::setsid();
      if (::chdir("/") != 0) ::_exit(1);  // holds no directory of the caller's
      ::_exit(racksim::serve_engine_daemon(argv[2], ready[1], idle_s));
    }
    ::close(ready[1]);
    char byte = 0;
    ssize_t n;
    while ((n = ::read(ready[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    return n == 1 ? 0 : 1;  // EOF without the byte: the daemon could not listen
  }
  std::fprintf(stderr, "racksim-engine: the engine server the racksim library starts (sim/engine/engine_server.hpp); "
                       "not a command: use racksim\n");
  return 2;
}
