#include "serve/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  const rlimit address_space{limits.address_space_bytes, limits.address_space_bytes};
  // fork + exec rather than posix_spawn so that the limits hold from the child's first instruction (a
  // limit set on a spawned pid races with what it starts). Between fork and exec the child calls only
  // async-signal-safe functions: the server has other threads.
  Fd exec_r, exec_w;  // close-on-exec: EOF tells the parent that exec succeeded, an errno that it failed
  make_pipe(exec_r, exec_w);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // own group: a timeout kills the engine's forks too
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);  // the server ignores SIGPIPE
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the server blocks SIGINT/SIGTERM in its threads
    if (limits.address_space_bytes > 0) ::setrlimit(RLIMIT_AS, &address_space);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_w.fd, 1) < 0 || ::dup2(err_w.fd, 2) < 0) ::_exit(127);
    ::execve(program.c_str(), argv.data(), environ);  // every other descriptor is close-on-exec
    const int error = errno;
    (void)!::write(exec_w.fd, &error, sizeof error);
    ::_exit(127);
  }
  exec_w.reset();
  int exec_error = 0;
  if (::read(exec_r.fd, &exec_error, sizeof exec_error) == static_cast<ssize_t>(sizeof exec_error)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot start " + program + ": " + std::strerror(exec_error));
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
