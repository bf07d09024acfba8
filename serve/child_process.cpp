#include "serve/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace racksim::serve {

namespace {

struct Fd {  // closes on scope exit
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

void make_pipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  read_end.fd = p[0];
  write_end.fd = p[1];
}

}  // namespace

ChildResult run_child(const std::string& program, const std::vector<std::string>& args, const ChildLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  Fd out_r, out_w, err_r, err_w;
  make_pipe(out_r, out_w);
  make_pipe(err_r, err_w);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);  // dup2 clears close-on-exec on 1 and 2 only
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);         // the server blocks SIGINT/SIGTERM in its threads
  posix_spawnattr_setsigdefault(&attr, &defaults);  // and ignores SIGPIPE
  posix_spawnattr_setpgroup(&attr, 0);              // own group: a timeout kills the engine's forks too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
  if (limits.address_space_bytes > 0) {
    // Set right after the spawn: the child has only begun its startup, which needs a few MB.
    const rlimit lim{limits.address_space_bytes, limits.address_space_bytes};
    ::prlimit(pid, RLIMIT_AS, &lim, nullptr);
  }
  out_w.reset();
  err_w.reset();

  ChildResult r;
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(limits.wall_s));
  char buf[65536];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        (i == 0 ? out_r : err_r).reset();
        continue;
      }
      std::string& dst = i == 0 ? r.out : r.err;
      const std::size_t cap = i == 0 ? limits.max_output_bytes : 64 * 1024;  // stderr: one line is expected
      if (dst.size() + got > cap) {
        if (i == 0) r.output_too_large = true;
        dst.append(buf, cap - std::min(cap, dst.size()));
      } else {
        dst.append(buf, static_cast<std::size_t>(got));
      }
    }
    if (r.output_too_large) break;
  }
  if (r.timed_out || r.output_too_large) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace racksim::serve
