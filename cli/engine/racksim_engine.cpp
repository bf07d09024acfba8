// racksim-engine: the engine server (sim/engine/engine_server.hpp). A multi-threaded process that uses the
// racksim library (a Jupyter kernel, Python threads) starts it with posix_spawn and sends it runs over the
// socket at fd 3; it forks the engine processes that the threaded caller must not fork itself. Not a
// command for users.
#include <cstdio>
#include <cstring>

#include "sim/engine/engine_server.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--serve") == 0) return racksim::serve_engine_requests(3, 3);
  std::fprintf(stderr, "racksim-engine: the engine server the racksim library starts (sim/engine/engine_server.hpp); "
                       "not a command: use racksim\n");
  return 2;
}
