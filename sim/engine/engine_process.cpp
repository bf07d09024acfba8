#include "sim/engine/engine_process.hpp"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "sim/core/errors.hpp"

namespace racksim {

namespace {

void put_string(std::string& out, const std::string& s) {
  const std::uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(s);
}

std::string get_string(const std::string& in, std::size_t& pos) {
  std::uint64_t n = 0;
  if (pos + sizeof n > in.size()) throw SimulationError("internal: truncated error from the engine process");
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n > in.size()) throw SimulationError("internal: truncated error from the engine process");
  std::string s = in.substr(pos, n);
  pos += n;
  return s;
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string data;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

// Runs `work`, turning an exception into a typed frame for the caller.
std::string run_work(const std::function<std::string()>& work) {
  std::string frame;
  try {
    frame = "R" + work();
  } catch (const InputError& e) {
    frame = "I";
    put_string(frame, e.what());
    put_string(frame, e.where());
    put_string(frame, e.json_path());
    put_string(frame, e.value());
    put_string(frame, e.allowed());
  } catch (const SimulationError& e) {
    frame = "S";
    put_string(frame, e.what());
  } catch (const std::exception& e) {
    frame = "E";
    put_string(frame, e.what());
  } catch (...) {
    frame = "E";
    put_string(frame, "unknown exception");
  }
  return frame;
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& work) {
  // The work runs on a new thread, whose malloc arena is fresh memory: on the main thread malloc would
  // reuse the free chunks of the heap shared with the caller, and every write there is a copy-on-write
  // fault with a TLB shootdown (the dearest kind of fault on a VM; 2x slower runs measured).
  std::string frame;
  try {
    std::thread worker([&] { frame = run_work(work); });
    worker.join();
  } catch (const std::exception&) {
    frame = run_work(work);  // no thread available: run here
  }
  const bool ok = write_all(fd, frame);
  ::close(fd);
  ::_exit(ok ? 0 : 3);  // no SimGrid teardown, no atexit handlers of the parent
}

}  // namespace

std::string run_in_child_process(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError(std::string("cannot create a pipe for the engine process: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SimulationError(std::string("cannot fork the engine process: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  const std::string data = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (data.empty()) {
    std::string how = "without a result";
    if (waited == pid && WIFSIGNALED(status)) how = "killed by signal " + std::to_string(WTERMSIG(status));
    else if (waited == pid && WIFEXITED(status)) how = "with exit status " + std::to_string(WEXITSTATUS(status));
    throw SimulationError("the SimGrid engine process ended " + how + " (an internal error of the engine)");
  }
  std::size_t pos = 1;
  switch (data[0]) {
    case 'R': return data.substr(1);
    case 'I': {
      const std::string what = get_string(data, pos), where = get_string(data, pos), path = get_string(data, pos),
                        value = get_string(data, pos), allowed = get_string(data, pos);
      if (where.empty() && path.empty() && value.empty() && allowed.empty()) throw InputError(what);
      throw InputError(where, path, value, allowed);
    }
    case 'S': throw SimulationError(get_string(data, pos));
    default: throw SimulationError("internal error in the engine process: " + get_string(data, pos));
  }
}

}  // namespace racksim
