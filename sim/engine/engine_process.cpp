#include "sim/engine/engine_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>
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

}  // namespace

// Runs `work`, turning an exception into a typed frame for the caller.
std::string framed(const std::function<std::string()>& work) {
  std::string frame;
  try {
    frame = "R" + work();
  } catch (const InputError& e) {
    frame = dynamic_cast<const EngineLimitError*>(&e) ? "L" : "I";
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

std::string unframe(const std::string& data, const std::string& what_died) {
  if (data.empty()) throw SimulationError(what_died);
  std::size_t pos = 1;
  switch (data[0]) {
    case 'R': return data.substr(1);
    case 'I': {
      const std::string what = get_string(data, pos), where = get_string(data, pos), path = get_string(data, pos),
                        value = get_string(data, pos), allowed = get_string(data, pos);
      if (where.empty() && path.empty() && value.empty() && allowed.empty()) throw InputError(what);
      throw InputError(where, path, value, allowed);
    }
    case 'L': {  // an EngineLimitError (errors.hpp): the same fields
      const std::string what = get_string(data, pos), where = get_string(data, pos), path = get_string(data, pos),
                        value = get_string(data, pos), allowed = get_string(data, pos);
      throw EngineLimitError(where, path, value, allowed);
    }
    case 'S': throw SimulationError(get_string(data, pos));
    default: throw SimulationError("internal error in the engine process: " + get_string(data, pos));
  }
}

int threads_in_this_process() {
  // Field 20 of /proc/self/stat; the command name (field 2) is in parentheses and may hold spaces.
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buffer[n] = '\0';
  const char* p = std::strrchr(buffer, ')');
  if (p == nullptr) return 0;
  for (int field = 2; field < 20 && *p; ++p)
    if (*p == ' ') ++field;
  return std::atoi(p);
}

namespace {

[[noreturn]] void child_main(int fd, const std::function<std::string()>& work) {
  // The work runs on a new thread, whose malloc arena is fresh memory: on the main thread malloc would
  // reuse the free chunks of the heap shared with the caller, and every write there is a copy-on-write
  // fault with a TLB shootdown (the dearest kind of fault on a VM; 2x slower runs measured).
  std::string frame;
  try {
    std::thread worker([&] { frame = framed(work); });
    worker.join();
  } catch (const std::exception&) {
    frame = framed(work);  // no thread available: run here
  }
  const bool ok = write_all(fd, frame);
  ::close(fd);
  ::_exit(ok ? 0 : 3);  // no SimGrid teardown, no atexit handlers of the parent
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

// Forks one engine process for `work`; the caller reads `fd` and reaps `pid`.
Child start_child(const std::function<std::string()>& work) {
  const int threads = threads_in_this_process();
  if (threads > 1)
    throw std::logic_error("internal: refusing to fork an engine process from a process with " + std::to_string(threads) +
                           " threads (engine_process.hpp: use the engine server)");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw SimulationError(std::string("cannot create a pipe for the engine process: ") + std::strerror(errno));
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
  return {pid, fds[0], {}};
}

// Reaps the child and returns what it sent, or a description of how it died.
std::string finish_child(Child& c, std::string& died) {
  ::close(c.fd);
  c.fd = -1;
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(c.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  std::string how = "without a result";
  if (waited == c.pid && WIFSIGNALED(status)) how = "killed by signal " + std::to_string(WTERMSIG(status));
  else if (waited == c.pid && WIFEXITED(status)) how = "with exit status " + std::to_string(WEXITSTATUS(status));
  died = "the SimGrid engine process ended " + how + " (an internal error of the engine)";
  return std::move(c.data);
}

}  // namespace

namespace {
bool disposable = false;  // set_disposable_engine_process(): the first run goes in place
}  // namespace

void set_disposable_engine_process() { disposable = true; }

int default_engine_jobs() { return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u)); }

namespace {
// The first run of a disposable process, in place: on a new thread, for the malloc arena (child_main).
std::string run_in_place(const std::function<std::string()>& work) {
  disposable = false;
  std::string frame;
  try {
    std::thread worker([&] { frame = framed(work); });
    worker.join();
  } catch (const std::system_error&) {
    frame = framed(work);
  }
  return unframe(frame, "the engine run ended without a result");
}
}  // namespace

std::string run_in_child_process(const std::function<std::string()>& work) {
  if (disposable) return run_in_place(work);
  Child c = start_child(work);
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    c.data.append(buffer, static_cast<std::size_t>(n));
  }
  std::string died;
  const std::string data = finish_child(c, died);
  return unframe(data, died);
}

std::vector<std::string> run_in_child_processes(const std::vector<std::function<std::string()>>& works, int jobs,
                                                const std::function<void(std::size_t)>& progress) {
  return run_in_child_processes(
      works.size(), [](std::size_t) { return std::size_t{0}; }, [&works](std::size_t i) { return works[i](); }, jobs,
      progress);
}

std::vector<std::string> run_in_child_processes(std::size_t count, const std::function<std::size_t(std::size_t)>& prepare,
                                                const std::function<std::string(std::size_t)>& work, int jobs,
                                                const std::function<void(std::size_t)>& progress) {
  std::size_t prepared = 0;  // works [0, prepared) are ready to fork
  std::size_t held = 0;      // bytes the prepared works of this batch hold
  std::exception_ptr prepare_error;
  const auto prepare_next = [&] {
    try {
      held += prepare(prepared);
      ++prepared;
    } catch (...) {
      prepare_error = std::current_exception();
    }
  };
  if (disposable && count == 1) {
    prepare_next();
    if (prepare_error) std::rethrow_exception(prepare_error);
    std::vector<std::string> one{run_in_place([&work] { return work(0); })};
    if (progress) progress(1);
    return one;
  }
  std::vector<std::string> frames(count), died(count);
  std::vector<Child> running;
  std::vector<std::size_t> index_of;  // parallel to running
  std::size_t next = 0, done = 0;
  bool failed = false;
  const std::size_t limit = static_cast<std::size_t>(std::max(jobs, 1));
  const auto stopped = [&] { return failed || prepare_error != nullptr; };
  while (next < count || !running.empty()) {
    if (!stopped() && running.empty() && prepared == next && next < count) {
      // A batch, prepared while no child shares this process's pages: a write to a page that a running
      // child still shares is a copy-on-write fault with a TLB shootdown, and preparing the next work beside
      // the running ones took that fault on most of what it wrote (a 25-size sweep of the 72-GPU ring spent
      // a third of its time there). At least one work, then more while the batch holds under the budget.
      held = 0;
      do prepare_next();
      while (!prepare_error && prepared < count && held < kPrepareAheadBytes);
    }
    while (!stopped() && next < prepared && running.size() < limit) {
      const std::size_t i = next;
      running.push_back(start_child([&work, i] { return work(i); }));
      index_of.push_back(next++);
    }
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const auto& c : running) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw SimulationError(std::string("cannot wait for the engine processes: ") + std::strerror(errno));
    }
    for (std::size_t k = running.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = ::read(running[k].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        running[k].data.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      const std::size_t i = index_of[k];
      frames[i] = finish_child(running[k], died[i]);
      if (frames[i].empty() || frames[i][0] != 'R') failed = true;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      index_of.erase(index_of.begin() + static_cast<std::ptrdiff_t>(k));
      if (progress) progress(++done);
    }
  }
  // An error in preparing any work is the answer, as when every work was prepared before the first fork.
  while (!prepare_error && prepared < count) prepare_next();
  if (prepare_error) std::rethrow_exception(prepare_error);
  std::vector<std::string> out(count);
  for (std::size_t i = 0; i < next; ++i) out[i] = unframe(frames[i], died[i]);  // throws the first failure
  return out;
}

}  // namespace racksim
