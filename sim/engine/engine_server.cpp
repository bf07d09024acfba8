#include "sim/engine/engine_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <system_error>

#include "sim/calib/heldout_errors.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/hugepage_malloc.hpp"
#include "sim/core/private_dir.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/local_engine.hpp"
#include "sim/engine/result_wire.hpp"
#include "sim/engine/socket_io.hpp"
#include "sim/topo/topology_graph.hpp"

#ifndef RACKSIM_ENGINE_PATH
#error "RACKSIM_ENGINE_PATH (the racksim-engine executable) must be defined by the build"
#endif

extern char** environ;

namespace racksim {

namespace {

// One running server: its process and our end of its socket.
struct Server {
  pid_t pid = -1;
  int fd = -1;
};

void stop(Server& s) {
  if (s.fd >= 0) ::close(s.fd);  // the server sees end of input and exits
  if (s.pid > 0) {
    int status = 0;
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  s = Server{};
}

Server spawn_server() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw SimulationError(std::string("cannot create a socket for the engine server: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 3);  // dup2 clears close-on-exec on fd 3
  std::string path = RACKSIM_ENGINE_PATH, serve = "--serve";
  char* argv[] = {path.data(), serve.data(), nullptr};
  pid_t pid = -1;
  SpawnEnvironment env = environment_for_engine();  // malloc on huge pages (sim/core/hugepage_malloc.hpp)
  const int err = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, env.envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw SimulationError("cannot start the engine server " + path + ": " + std::strerror(err));
  }
  return {pid, fds[0]};
}

// Idle servers, shared by the threads of this process; each call takes one (or starts one) for itself.
class ServerPool {
 public:
  static ServerPool& instance() {
    static ServerPool* pool = new ServerPool;  // never destroyed: servers end with this process's sockets
    return *pool;
  }
  std::string call(const std::string& request) {
    Server s = take();
    std::string reply;
    if (!send_message(s.fd, request) || !recv_message(s.fd, reply)) {
      stop(s);
      throw SimulationError("the engine server (" + std::string(RACKSIM_ENGINE_PATH) + ") ended without a result");
    }
    give_back(s);
    return reply;
  }

 private:
  Server take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        Server s = idle_.back();
        idle_.pop_back();
        return s;
      }
    }
    return spawn_server();
  }
  void give_back(const Server& s) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(s);
  }
  std::mutex mutex_;
  std::vector<Server> idle_;
};

// The server's state: the Simulation of the last request, reused while the next names the same inputs.
class ServerState {
 public:
  std::string handle(const EngineRequest& r) {
    prepare(r);
    return run(r);
  }
  // Builds (or keeps) the Simulation the request names: its topology, racks, partitions, calibration and
  // failures. No engine is created here: the daemon calls it in its own process and forks the run.
  static std::string key_of(const EngineRequest& r) {
    std::string key = r.topology_json;
    key += '\0' + std::to_string(r.racks) + '\0' + r.partitions + '\0' + r.calibration_json + '\0' + r.partition_mode;
    for (const auto& f : r.failures) key += '\0' + f;
    return key;
  }
  bool prepared_for(const EngineRequest& r) const { return simulation_ && key_of(r) == key_; }
  // The daemon prepares from a request's encoded head (prepare_next) and keeps its bytes, less the kind byte
  // (key_of leaves the kind out too): a request whose head has the same bytes names this Simulation, which the
  // spare can tell by comparing them in place, without copying the head's ~100 KB of topology and calibration
  // text twice (decoding, key_of) into fresh pages (~0.2 ms of an 8-GPU run, session 54).
  void remember_head(const std::string& head) { head_ = simulation_ && head.size() > 1 ? head.substr(1) : std::string(); }
  bool prepared_for_head(const std::string& message, std::size_t head_bytes) const {
    return simulation_ && !head_.empty() && head_bytes == head_.size() + 1 && message.size() >= head_bytes &&
           message.compare(1, head_.size(), head_) == 0;
  }
  void prepare(const EngineRequest& r) {
    std::string key = key_of(r);
    if (key == key_ && simulation_) return;
    simulation_.reset();
    graph_.reset();
    key_.clear();
    head_.clear();
    const TopologySpec spec = topology_from_json_text(r.topology_json, "engine request (topology)");
    graph_ = std::make_unique<TopologyGraph>(spec, r.racks);
    if (!r.partitions.empty()) graph_->apply_partitions(parse_partitions(r.partitions, *graph_));
    FailureScenario failures;
    for (const auto& f : r.failures) failures.items.push_back(parse_failure_item(f));
    failures.mode = partition_mode_from_string(r.partition_mode, "engine request (partition mode)");
    simulation_ = std::make_unique<Simulation>(
        *graph_, calibration_from_json_text(r.calibration_json, "engine request (calibration)"), failures);
    key_ = std::move(key);
  }
  // Runs the request on the prepared Simulation.
  std::string run(const EngineRequest& r) const {
    // The caller's address-space limit holds here too (a daemon's child does not inherit it): the same
    // bound on what one request may take as if it had run in the caller's own processes.
    if (r.address_space_limit > 0) {
      rlimit now{};
      if (::getrlimit(RLIMIT_AS, &now) == 0 && (now.rlim_cur == RLIM_INFINITY || now.rlim_cur > r.address_space_limit)) {
        const rlimit lower{static_cast<rlim_t>(r.address_space_limit), now.rlim_max};
        ::setrlimit(RLIMIT_AS, &lower);
      }
    }
    std::vector<const Schedule*> pointers;
    for (const auto& s : r.schedules) pointers.push_back(&s);
    switch (r.kind) {
      case EngineRequest::Kind::concurrent: return encode_run_results(simulation_->run_concurrent(pointers, r.options));
      case EngineRequest::Kind::after: return encode_run_results(simulation_->run_after(pointers, r.after, r.options));
      case EngineRequest::Kind::each: return encode_run_results(simulation_->run_each(pointers, r.jobs, r.options));
      case EngineRequest::Kind::transfers:
        return encode_run_results({simulation_->run_transfers(r.transfers, r.options)});
    }
    throw SimulationError("internal: unknown engine request kind");
  }

 private:
  std::string key_;
  std::string head_;  // remember_head
  std::unique_ptr<TopologyGraph> graph_;
  std::unique_ptr<Simulation> simulation_;
};

}  // namespace


namespace {

std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The address of a Unix socket at `path`; false when the path does not fit sun_path.
bool unix_address(const std::string& path, sockaddr_un& addr) {
  addr = sockaddr_un{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return true;
}

int connect_unix(const std::string& path) {
  sockaddr_un addr;
  if (!unix_address(path, addr)) return -1;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool daemon_wanted() {
  const char* v = std::getenv("RACKSIM_ENGINE_DAEMON");
  return v == nullptr || (std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0);
}

// Starts `racksim-engine --daemon PATH`: the launcher forks the daemon (new session, no terminal) and
// exits once it listens, so that a connect right after the wait succeeds.
bool start_daemon(const std::string& path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {0, 1, 2}) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  std::string engine = RACKSIM_ENGINE_PATH, flag = "--daemon", where = path, idle = std::to_string(kDaemonIdleSeconds);
  // RACKSIM_ENGINE_IDLE_S: how long the daemon outlives its last caller (1-3600 s; tests use a short one).
  if (const char* v = std::getenv("RACKSIM_ENGINE_IDLE_S")) {
    char* end = nullptr;
    const long s = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && s >= 1 && s <= 3600) idle = std::to_string(s);
  }
  char* argv[] = {engine.data(), flag.data(), where.data(), idle.data(), nullptr};
  pid_t pid = -1;
  SpawnEnvironment env = environment_for_engine();  // malloc on huge pages (sim/core/hugepage_malloc.hpp)
  const int err = ::posix_spawn(&pid, engine.c_str(), &actions, nullptr, argv, env.envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// This process's connection to the daemon, kept for its later runs.
class DaemonClient {
 public:
  static DaemonClient& instance() {
    static DaemonClient* client = new DaemonClient;  // never destroyed: the socket closes with the process
    return *client;
  }
  // The reply, or false when no daemon can be reached (the caller then spawns a server of its own).
  bool call(const std::string& request, std::string& reply) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (fd_ < 0 && !connect()) return false;
      if (send_message(fd_, request) && recv_message(fd_, reply)) return true;
      ::close(fd_);  // a daemon that ended between calls (idle): once more with a fresh one
      fd_ = -1;
    }
    throw SimulationError("the engine daemon (" + std::string(RACKSIM_ENGINE_PATH) + ") ended without a result");
  }

 private:
  bool connect() {
    const std::string path = engine_daemon_socket_path();
    if (path.empty()) return false;
    fd_ = connect_unix(path);
    if (fd_ >= 0) return true;
    if (!start_daemon(path)) return false;
    for (int i = 0; i < 50 && fd_ < 0; ++i) {  // listening already when the launcher exits; a little slack
      fd_ = connect_unix(path);
      if (fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(2 * (i + 1)));
    }
    return fd_ >= 0;
  }
  std::mutex mutex_;
  int fd_ = -1;
};

}  // namespace

std::string engine_daemon_socket_path() {
  const std::string dir = private_runtime_dir();  // this user's only (sim/core/private_dir.hpp)
  if (dir.empty()) return "";
  const std::string identity = file_identity(RACKSIM_ENGINE_PATH);  // a rebuilt engine gets a daemon of its own
  if (identity.empty()) return "";
  char name[64];
  std::snprintf(name, sizeof name, "/racksim-engine-%016llx.sock", static_cast<unsigned long long>(fnv1a(identity)));
  return dir + name;
}

std::vector<RunResult> run_on_engine_server(const EngineRequest& request) {
  std::string bytes;
  {
    EngineRequest with_limit = request;  // shallow: schedule_ptrs point at the caller's schedules
    rlimit as{};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) with_limit.address_space_limit = as.rlim_cur;
    bytes = encode_engine_request(with_limit);
  }
  std::string reply;
  if (local_engine() != nullptr || !daemon_wanted() || !DaemonClient::instance().call(bytes, reply))
    reply = ServerPool::instance().call(bytes);
  return decode_run_results(unframe(reply, "the engine server sent an empty reply"));
}

namespace {
// The largest run the daemon prepares in its own loop for the next request (engine_server.hpp).
constexpr int kDaemonCachedRacks = 8;
// How often the loop wakes while a run is in flight, at the least: a run's end wakes it at once (its
// control socket closes), this only bounds the wait if a wake-up were missed.
constexpr int kBusyPollMs = 50;
constexpr int kIdlePollMs = 1000;

volatile sig_atomic_t daemon_stop = 0;  // SIGTERM / SIGINT: end the loop and remove the socket
void on_daemon_stop(int) { daemon_stop = 1; }

// Whether the daemon has sent this spare its request (then warming up stops: the request comes first).
bool request_waiting(int control) {
  pollfd p{control, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

// Warming up goes in steps of this much memory; between steps the spare looks for its request.
constexpr std::size_t kWarmStepBytes = std::size_t{1} << 20;

// Populates [from, to) writable (copying shared pages, faulting in fresh ones); false when it stopped
// because the request came.
bool populate(std::uintptr_t from, std::uintptr_t to, int control) {
  for (std::uintptr_t at = from; at < to; at += kWarmStepBytes) {
    if (request_waiting(control)) return false;
    (void)::madvise(reinterpret_cast<void*>(at), std::min<std::uintptr_t>(kWarmStepBytes, to - at), MADV_POPULATE_WRITE);
  }
  return true;
}

// Takes now, while the spare waits, the copy-on-write faults its run would take: every resident page of
// its private writable memory (the heap holding the prepared Simulation, the libraries' data) is copied
// in one madvise per run of pages instead of one fault each during the run (the 72-GPU ring's run took
// ~560 such faults, each a trap and a TLB flush on this VM). Pages never touched stay shared.
// A mapping is looked at this much at a time: one bounded residency vector and a look for the request
// between windows. Without the bound a sanitizer's shadow mapping (14 TiB "rw-p", mostly never touched)
// asked for a 3.7 GB vector and kept the spare away from its request for minutes per request.
constexpr std::uintptr_t kScanWindowBytes = std::uintptr_t{256} << 20;

bool prefault_private_pages(int control) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)control;
  return true;  // the private pages are mostly the sanitizer's shadow: copying them ahead buys nothing
#else
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return true;
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident;
  char line[512];
  bool whole = true;
  while (whole && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long from = 0, to = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &from, &to, perms) != 3 || std::strcmp(perms, "rw-p") != 0) continue;
    for (std::uintptr_t window = from; whole && window < to; window += kScanWindowBytes) {
      if (request_waiting(control)) {
        whole = false;
        break;
      }
      const std::uintptr_t window_end = std::min<std::uintptr_t>(to, window + kScanWindowBytes);
      const std::size_t pages = (window_end - window) / page;
      resident.assign(pages, 0);
      if (::mincore(reinterpret_cast<void*>(window), window_end - window, resident.data()) != 0) continue;
      for (std::size_t i = 0; whole && i < pages;) {
        if (!(resident[i] & 1)) {
          ++i;
          continue;
        }
        std::size_t j = i;
        while (j < pages && (resident[j] & 1)) ++j;
        whole = populate(window + i * page, window + j * page, control);
        i = j;
      }
    }
  }
  std::fclose(maps);
  return whole;
#endif
}

// Fresh heap the spare faults in while it waits: its request's own allocations (the message, the decoded
// schedules, the compiled run) would otherwise fault in page by page on the request's path (~1 000
// faults for the 72-GPU ring's 10 224 tasks, ~4 MiB). Enough for a 72-GPU run; bigger requests fault in
// the rest as before. Costs the spare ~2-4 ms of CPU between requests and this much memory.
constexpr std::size_t kSpareWarmHeapBytes = std::size_t{16} << 20;
// glibc's largest mmap threshold (mallopt refuses more): blocks up to it come from the warm heap.
constexpr int kLargestMmapThresholdBytes = 32 << 20;

// Populates a block of `bytes` from this thread's malloc arena and frees it (kept: no trim).
void warm_block(std::size_t bytes, int control) {
  void* block = std::malloc(bytes);
  if (block == nullptr) return;
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t from = (reinterpret_cast<std::uintptr_t>(block) + page - 1) & ~(page - 1);
  const std::uintptr_t to = (reinterpret_cast<std::uintptr_t>(block) + bytes) & ~(page - 1);
  populate(from, to, control);
  std::free(block);
}

// The engine runs on a thread of its own (engine_process.cpp: a fresh malloc arena). A thread that ends
// leaves its arena and its stack to the next one glibc starts, so one started and ended here, having
// warmed its arena, gives the run's thread warm memory too.
constexpr std::size_t kSpareWarmArenaBytes = std::size_t{4} << 20;

void warm_heap(int control) {
  // Memory freed stays in the heap (no trim), and large blocks (the request's message) come from the
  // heap too rather than from fresh mmaps. Only this disposable child's allocator is tuned so.
  ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  ::mallopt(M_MMAP_THRESHOLD, kLargestMmapThresholdBytes);
  warm_block(kSpareWarmHeapBytes, control);
  if (request_waiting(control)) return;
  try {
    std::thread([control] { warm_block(kSpareWarmArenaBytes, control); }).join();
  } catch (const std::system_error&) {  // no thread to be had: the run's thread warms its own memory
  }
}

// The spare child: forked between requests from the daemon holding the prepared Simulation, it waits on
// `control` for the connection of the next request, reads and runs it, answers and exits. Before its
// answer it sends on `control` the head of a request that names another Simulation (so that the daemon
// prepares that one for the next request); nothing when it had the request's Simulation ready.
[[noreturn]] void spare_main(int control, ServerState& state) {
  (void)::prctl(PR_SET_NAME, "racksim-spare");  // what `ps` (and the tests) tell a waiting spare by
  if (prefault_private_pages(control)) warm_heap(control);
  const int conn = recv_fd(control);
  if (conn < 0) ::_exit(0);  // the daemon ended, or let this spare go, before a request came
  // A child only ever takes this name here, never by inheritance: a child forked a moment ago still has the
  // daemon's name, and a test (or a person) killing "the run" must not find a spare not yet renamed.
  (void)::prctl(PR_SET_NAME, "racksim-run");
  std::string message;
  if (!recv_message(conn, message)) ::_exit(1);  // the caller went away
  EngineRequest request;
  bool ready = false;  // the daemon prepared this request's Simulation: its head's texts need no decoding
  const std::string decoded = framed([&] {
    ready = state.prepared_for_head(message, engine_request_head_bytes(message));
    request = ready ? decode_engine_request_body(message) : decode_engine_request(message);
    return std::string();
  });
  if (decoded.empty() || decoded[0] != 'R') ::_exit(send_message(conn, decoded) ? 0 : 1);  // not a request
  if (!ready && !state.prepared_for(request)) {
    std::size_t head_bytes = 0;
    (void)decode_engine_request_head(message, head_bytes);
    (void)send_message(control, message.substr(0, head_bytes));
  }
  std::string().swap(message);
  const std::string reply = framed([&] {
    if (!ready) state.prepare(request);  // nothing to do when the daemon had it ready
    return state.run(request);
  });
  ::_exit(send_message(conn, reply) ? 0 : 1);
}

// The daemon's loop and what it holds: the listening socket, the callers' connections, the prepared
// Simulation and the spare child forked from it.
class Daemon {
 public:
  Daemon(int listen_fd, int idle_seconds) : listen_fd_(listen_fd), idle_(idle_seconds) {}
  void run() {
    for (;;) {
      reap();
      if (daemon_stop) break;
      const bool busy = any_busy();
      if (connections_.empty() && !busy && std::chrono::steady_clock::now() - last_activity_ >= idle_) break;
      // The next spare is forked between runs, off the path of a request (a second caller arriving while
      // a run is in flight gets one forked at once: hand_off).
      if (spare_.pid == 0 && !busy) fork_spare();
      if (!wait_and_serve(busy ? kBusyPollMs : kIdlePollMs)) break;
    }
    if (spare_.pid > 0) ::kill(-spare_.pid, SIGKILL);  // it would end anyway at the end of its control socket
  }

 private:
  struct Connection {
    pid_t busy = 0;          // the child answering it, 0 while waiting for a request
    int control = -1;        // that child's control socket
    bool abandoned = false;  // the caller went away during its run: its group was killed
  };
  struct Spare {
    pid_t pid = 0;
    int control = -1;
  };
  enum class Slot : std::uint8_t { listen, connection, control, spare };

  bool any_busy() const {
    for (const auto& [fd, c] : connections_)
      if (c.busy != 0) return true;
    return false;
  }

  void fork_spare() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    if (pid == 0) {
      ::setpgid(0, 0);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      ::close(listen_fd_);
      ::close(fds[0]);
      for (const auto& [fd, c] : connections_) {
        ::close(fd);
        if (c.control >= 0) ::close(c.control);
      }
      set_disposable_engine_process();
      spare_main(fds[1], state_);
    }
    ::setpgid(pid, pid);  // both sides: the group exists before either can signal it
    ::close(fds[1]);
    spare_ = {pid, fds[0]};
  }

  void let_spare_go() {  // it ends at the end of its control socket
    if (spare_.pid == 0) return;
    ::close(spare_.control);
    spare_ = {};
  }

  // The caller's request goes to the spare (forked now when there is none); false when no child can take it.
  bool hand_off(int fd, Connection& c) {
    if (spare_.pid == 0) fork_spare();
    if (spare_.pid == 0) return false;
    if (!send_fd(spare_.control, fd)) {
      ::kill(-spare_.pid, SIGKILL);
      let_spare_go();
      return false;
    }
    c.busy = spare_.pid;
    c.control = spare_.control;
    spare_ = {};
    return true;
  }

  // A run asked for another Simulation: build it here for the next request when it is small (a big
  // platform would keep the other callers waiting while this single-threaded loop builds it; its child
  // builds its own), and let the spare holding the old one go.
  void prepare_next(const std::string& head) {
    (void)framed([&] {
      std::size_t head_bytes = 0;
      const EngineRequest r = decode_engine_request_head(head, head_bytes);
      if (!state_.prepared_for(r) && r.racks <= kDaemonCachedRacks) {
        state_.prepare(r);
        let_spare_go();
      }
      if (state_.prepared_for(r)) state_.remember_head(head);
      return std::string();
    });
    ::malloc_trim(0);  // the old Simulation's pages back to the system: smaller forks, fewer pages to prefault
  }

  // `status` as waitpid gives it. A child that died without its answer (killed, crashed: it exits 0
  // once it has answered) leaves its caller waiting: the connection is closed, and the caller sees
  // the end of it instead of waiting for ever.
  void child_ended(pid_t pid, int status) {
    if (pid == spare_.pid) {
      ::close(spare_.control);
      spare_ = {};
      return;
    }
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      Connection& c = it->second;
      if (c.busy != pid) continue;
      ::close(c.control);
      c.control = -1;
      c.busy = 0;
      const bool answered = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (c.abandoned || !answered) {
        ::close(it->first);
        connections_.erase(it);
      }
      return;
    }
  }

  void reap() {
    int status = 0;
    for (pid_t done; (done = ::waitpid(-1, &status, WNOHANG)) > 0;) child_ended(done, status);
  }

  void close_connection(int fd) {
    ::close(fd);
    connections_.erase(fd);
  }

  // One poll and what it found; false when polling fails.
  bool wait_and_serve(int timeout_ms) {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    std::vector<std::pair<Slot, int>> what{{Slot::listen, listen_fd_}};  // parallel to fds: the connection's fd
    for (const auto& [fd, c] : connections_) {
      if (c.busy == 0) {
        fds.push_back({fd, POLLIN | POLLRDHUP, 0});
        what.emplace_back(Slot::connection, fd);
        continue;
      }
      if (!c.abandoned) {
        fds.push_back({fd, POLLRDHUP, 0});
        what.emplace_back(Slot::connection, fd);
      }
      fds.push_back({c.control, POLLIN, 0});
      what.emplace_back(Slot::control, fd);
    }
    if (spare_.pid > 0) {
      fds.push_back({spare_.control, POLLIN, 0});
      what.emplace_back(Slot::spare, spare_.control);
    }
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) return errno == EINTR;
    if (n == 0) return true;
    for (std::size_t k = 1; k < fds.size(); ++k)
      if (fds[k].revents != 0) serve(what[k].first, what[k].second, fds[k].revents);
    if (fds[0].revents & POLLIN) {
      const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) connections_[conn] = Connection{};
    }
    last_activity_ = std::chrono::steady_clock::now();
    return true;
  }

  void serve(Slot slot, int fd, short events) {
    if (slot == Slot::spare) {  // a spare says nothing before its request: it died
      const pid_t pid = spare_.pid;
      let_spare_go();
      ::kill(-pid, SIGKILL);
      return;
    }
    const auto it = connections_.find(fd);
    if (it == connections_.end()) return;  // closed earlier in this round
    Connection& c = it->second;
    if (slot == Slot::control) {
      std::string head;
      if (recv_message(c.control, head)) {
        prepare_next(head);
        return;
      }
      // End of the control socket: the run is over (its child exits); reap it now to serve the caller's
      // next request without waiting for the poll's timeout.
      const pid_t pid = c.busy;
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      child_ended(pid, status);
      return;
    }
    if (c.busy != 0) {
      // The caller went away before its answer (killed, timed out): its run is for no one. End the
      // child's process group, engine processes included, and stop watching the connection.
      if (events & (POLLRDHUP | POLLHUP | POLLERR)) {
        ::kill(-c.busy, SIGKILL);
        ::shutdown(fd, SHUT_RDWR);
        c.abandoned = true;
      }
      return;
    }
    if (events & (POLLRDHUP | POLLHUP | POLLERR)) {  // the caller is done (a request is never followed by a close)
      close_connection(fd);
      return;
    }
    if ((events & POLLIN) && !hand_off(fd, c)) close_connection(fd);  // no child to run it: the caller sees the end
  }

  const int listen_fd_;
  const std::chrono::seconds idle_;
  std::map<int, Connection> connections_;  // by fd
  Spare spare_;
  ServerState state_;
  std::chrono::steady_clock::time_point last_activity_ = std::chrono::steady_clock::now();
};

}  // namespace

int serve_engine_daemon(const std::string& socket_path, int ready_fd, int idle_seconds) {
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGTERM, on_daemon_stop);
  ::signal(SIGINT, on_daemon_stop);
  auto ready = [&] {
    if (ready_fd >= 0) {
      const char byte = 1;
      (void)!::write(ready_fd, &byte, 1);
      ::close(ready_fd);
      ready_fd = -1;
    }
  };
  sockaddr_un addr;
  if (!unix_address(socket_path, addr)) return 2;
  const int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) return 1;
  ::umask(077);
  if (::bind(listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EADDRINUSE) return 1;
    if (const int other = connect_unix(socket_path); other >= 0) {  // another daemon serves this path
      ::close(other);
      ready();
      return 0;
    }
    ::unlink(socket_path.c_str());  // left by a daemon that died
    if (::bind(listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return 1;
  }
  if (::listen(listen_fd, 64) != 0) return 1;
  struct stat mine {};
  ::stat(socket_path.c_str(), &mine);
  ready();

  // Results quote the shipped held-out errors when run with the shipped calibration: parse those files here
  // once, not in every run (~1 ms of an 8-GPU call), while staying correct if they are regenerated.
  warm_shipped_tables();
  // Each request is run by a child forked from this process, which holds the prepared Simulation (kept
  // for the next request naming the same inputs: a sweep or a script calls with one system again and
  // again). The child is forked ahead, between requests (the spare), so that neither the fork nor its
  // first copy-on-write faults are on a request's path; it runs the engine in place (a disposable
  // process: no second fork, engine_process.hpp), answers on the connection and exits.
  Daemon(listen_fd, idle_seconds).run();
  struct stat now {};
  if (::stat(socket_path.c_str(), &now) == 0 && now.st_ino == mine.st_ino) ::unlink(socket_path.c_str());
  ::close(listen_fd);
  return 0;
}

int serve_engine_requests(int in_fd, int out_fd) {
  ::signal(SIGPIPE, SIG_IGN);  // a caller that went away is an error on send, not a signal
  ServerState state;
  std::string request;
  while (recv_message(in_fd, request)) {
    const std::string reply = framed([&] { return state.handle(decode_engine_request(request)); });
    if (!send_message(out_fd, reply)) return 1;
  }
  return 0;
}

}  // namespace racksim
