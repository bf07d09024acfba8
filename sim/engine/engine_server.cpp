#include "sim/engine/engine_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "sim/core/errors.hpp"
#include "sim/engine/engine_process.hpp"
#include "sim/engine/local_engine.hpp"
#include "sim/engine/result_wire.hpp"
#include "sim/topo/topology_graph.hpp"

#ifndef RACKSIM_ENGINE_PATH
#error "RACKSIM_ENGINE_PATH (the racksim-engine executable) must be defined by the build"
#endif

extern char** environ;

namespace racksim {

namespace {

class Writer {
 public:
  template <typename T>
  void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    out_.append(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <typename T>
  T pod() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::uint64_t count() {
    const auto n = pod<std::uint64_t>();
    if (n > in_.size()) fail();
    return n;
  }

 private:
  void need(std::uint64_t n) const {
    if (n > in_.size() - pos_) fail();
  }
  [[noreturn]] static void fail() { throw SimulationError("internal: truncated request to the engine server"); }
  const std::string& in_;
  std::size_t pos_ = 0;
};

// Schedules travel as raw fields. Adding a field to Task, Schedule or CollectiveRequest changes their
// sizes and stops the build here: encode it below (and in decode), then update the sizes.
static_assert(sizeof(Task) == 96 && sizeof(Schedule) == 448 && sizeof(CollectiveRequest) == 224 && sizeof(ExecParams) == 80,
              "a schedule struct changed: update encode_schedule/decode_schedule in engine_server.cpp");

void put_schedule(Writer& w, const Schedule& s) {
  const CollectiveRequest& q = s.request;
  w.pod(static_cast<int>(q.op));
  w.str(q.algorithm);
  w.pod<std::uint64_t>(q.gpus.size());
  for (int g : q.gpus) w.pod(g);
  w.pod(q.bytes);
  w.str(q.dtype);
  w.pod(q.chunk_bytes);
  w.pod(q.root);
  w.str(q.protocol);
  w.pod(q.channels);
  w.pod<std::uint8_t>(q.nvls_enabled);
  w.str(q.inner_algorithm);
  w.str(q.outer_algorithm);
  w.str(s.algorithm);
  w.pod(s.chunks);
  w.pod<std::uint64_t>(s.phases.size());
  for (const auto& p : s.phases) w.str(p);
  w.str(s.note);
  w.pod<std::uint64_t>(s.warnings.size());
  for (const auto& x : s.warnings) w.str(x);
  const ExecParams& e = s.exec;
  w.pod<std::uint8_t>(e.set);
  w.pod(e.efficiency);
  w.pod(e.launch_s);
  w.pod(e.intra_step_s);
  w.pod(e.net_step_s);
  w.str(e.arch);
  w.pod<std::uint8_t>(e.latency_at_launch);
  w.pod<std::uint64_t>(s.tasks.size());
  const auto endpoint = [&](const Endpoint& e) {
    w.pod(static_cast<std::uint8_t>(e.kind));
    w.pod(e.index);
  };
  for (const Task& t : s.tasks) {
    w.pod(t.id);
    endpoint(t.src);
    w.pod<std::uint64_t>(t.dsts.size());
    for (const auto& d : t.dsts) endpoint(d);
    w.pod(t.bytes);
    w.pod(t.chunk);
    w.pod(t.chunk_count);
    w.pod<std::uint8_t>(t.reduce);
    w.pod<std::uint64_t>(t.deps.size());
    for (int d : t.deps) w.pod(d);
    w.pod(t.phase);
  }
}

Schedule get_schedule(Reader& rd) {
  Schedule s;
  CollectiveRequest& q = s.request;
  q.op = static_cast<CollectiveOp>(rd.pod<int>());
  q.algorithm = rd.str();
  q.gpus.resize(rd.count());
  for (int& g : q.gpus) g = rd.pod<int>();
  q.bytes = rd.pod<std::uint64_t>();
  q.dtype = rd.str();
  q.chunk_bytes = rd.pod<std::uint64_t>();
  q.root = rd.pod<int>();
  q.protocol = rd.str();
  q.channels = rd.pod<int>();
  q.nvls_enabled = rd.pod<std::uint8_t>() != 0;
  q.inner_algorithm = rd.str();
  q.outer_algorithm = rd.str();
  s.algorithm = rd.str();
  s.chunks = rd.pod<int>();
  s.phases.resize(rd.count());
  for (auto& p : s.phases) p = rd.str();
  s.note = rd.str();
  s.warnings.resize(rd.count());
  for (auto& x : s.warnings) x = rd.str();
  ExecParams& e = s.exec;
  e.set = rd.pod<std::uint8_t>() != 0;
  e.efficiency = rd.pod<double>();
  e.launch_s = rd.pod<double>();
  e.intra_step_s = rd.pod<double>();
  e.net_step_s = rd.pod<double>();
  e.arch = rd.str();
  e.latency_at_launch = rd.pod<std::uint8_t>() != 0;
  s.tasks.resize(rd.count());
  const auto endpoint = [&] {
    Endpoint e;
    e.kind = static_cast<Endpoint::Kind>(rd.pod<std::uint8_t>());
    e.index = rd.pod<int>();
    return e;
  };
  for (Task& t : s.tasks) {
    t.id = rd.pod<int>();
    t.src = endpoint();
    t.dsts.resize(rd.count());
    for (auto& d : t.dsts) d = endpoint();
    t.bytes = rd.pod<std::uint64_t>();
    t.chunk = rd.pod<int>();
    t.chunk_count = rd.pod<int>();
    t.reduce = rd.pod<std::uint8_t>() != 0;
    t.deps.resize(rd.count());
    for (int& d : t.deps) d = rd.pod<int>();
    t.phase = rd.pod<int>();
  }
  return s;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);  // a dead peer is an error, not a SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool recv_all(int fd, char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_message(int fd, const std::string& message) {
  const std::uint64_t n = message.size();
  return send_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && send_all(fd, message.data(), message.size());
}

// false at end of input (or a broken peer).
bool recv_message(int fd, std::string& message) {
  std::uint64_t n = 0;
  if (!recv_all(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
  message.resize(n);
  return recv_all(fd, message.data(), n);
}

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
  const int err = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ);
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
  void prepare(const EngineRequest& r) {
    std::string key = key_of(r);
    if (key == key_ && simulation_) return;
    simulation_.reset();
    graph_.reset();
    key_.clear();
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
  std::unique_ptr<TopologyGraph> graph_;
  std::unique_ptr<Simulation> simulation_;
};

}  // namespace

std::string encode_engine_request(const EngineRequest& r) {
  Writer w;
  w.pod(static_cast<std::uint8_t>(r.kind));
  w.str(r.topology_json);
  w.pod(r.racks);
  w.str(r.partitions);
  w.str(r.calibration_json);
  w.pod<std::uint64_t>(r.failures.size());
  for (const auto& f : r.failures) w.str(f);
  w.str(r.partition_mode);
  w.pod<std::uint64_t>(r.after.size());
  for (const auto& a : r.after) {
    w.pod<std::uint64_t>(a.size());
    for (int i : a) w.pod(i);
  }
  const bool by_pointer = !r.schedule_ptrs.empty();
  w.pod<std::uint64_t>(by_pointer ? r.schedule_ptrs.size() : r.schedules.size());
  if (by_pointer)
    for (const Schedule* s : r.schedule_ptrs) put_schedule(w, *s);
  else
    for (const Schedule& s : r.schedules) put_schedule(w, s);
  w.pod<std::uint64_t>(r.transfers.size());
  for (const auto& t : r.transfers) {
    w.str(t.src);
    w.str(t.dst);
    w.pod(t.bytes);
  }
  w.pod<std::uint8_t>(r.options.record_trace);
  w.pod<std::uint8_t>(r.options.gpu_reduce_kernel);
  w.pod<std::uint8_t>(r.options.aggregate);
  w.pod(r.jobs);
  w.pod(r.address_space_limit);
  return w.take();
}

EngineRequest decode_engine_request(const std::string& bytes) {
  Reader rd(bytes);
  EngineRequest r;
  r.kind = static_cast<EngineRequest::Kind>(rd.pod<std::uint8_t>());
  r.topology_json = rd.str();
  r.racks = rd.pod<int>();
  r.partitions = rd.str();
  r.calibration_json = rd.str();
  r.failures.resize(rd.count());
  for (auto& f : r.failures) f = rd.str();
  r.partition_mode = rd.str();
  r.after.resize(rd.count());
  for (auto& a : r.after) {
    a.resize(rd.count());
    for (int& i : a) i = rd.pod<int>();
  }
  r.schedules.resize(rd.count());
  for (auto& s : r.schedules) s = get_schedule(rd);
  r.transfers.resize(rd.count());
  for (auto& t : r.transfers) {
    t.src = rd.str();
    t.dst = rd.str();
    t.bytes = rd.pod<std::uint64_t>();
  }
  r.options.record_trace = rd.pod<std::uint8_t>() != 0;
  r.options.gpu_reduce_kernel = rd.pod<std::uint8_t>() != 0;
  r.options.aggregate = rd.pod<std::uint8_t>() != 0;
  r.jobs = rd.pod<int>();
  r.address_space_limit = rd.pod<std::uint64_t>();
  return r;
}

std::string encode_schedule(const Schedule& schedule) {
  Writer w;
  put_schedule(w, schedule);
  return w.take();
}

Schedule decode_schedule(const std::string& bytes) {
  Reader rd(bytes);
  return get_schedule(rd);
}

namespace {

std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// A directory only this user can use: $XDG_RUNTIME_DIR (the session manager makes it 0700), else
// /tmp/racksim-<uid>, created 0700 and refused unless it is ours, a real directory and private.
std::string private_socket_dir() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() && (st.st_mode & 077) == 0) return xdg;
  }
  const std::string dir = "/tmp/racksim-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) return "";
  return dir;
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
  const int err = ::posix_spawn(&pid, engine.c_str(), &actions, nullptr, argv, environ);
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
  const std::string dir = private_socket_dir();
  if (dir.empty()) return "";
  struct stat st {};
  if (::stat(RACKSIM_ENGINE_PATH, &st) != 0) return "";
  const std::string identity = std::string(RACKSIM_ENGINE_PATH) + '\0' + std::to_string(st.st_ino) + '\0' +
                               std::to_string(st.st_size) + '\0' + std::to_string(st.st_mtim.tv_sec) + '.' +
                               std::to_string(st.st_mtim.tv_nsec);
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

volatile sig_atomic_t daemon_stop = 0;  // SIGTERM / SIGINT: end the loop and remove the socket
void on_daemon_stop(int) { daemon_stop = 1; }
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

  // Each connection is read here, one request at a time; its run is forked: the child inherits the
  // prepared Simulation (kept for the next request naming the same inputs: a sweep or a script calls
  // with one system again and again), runs it in place (a disposable process: no second fork,
  // engine_process.hpp), answers on the connection and exits.
  struct Connection {
    int fd = -1;
    pid_t busy = 0;  // the child computing its answer, 0 when waiting for a request
  };
  std::map<int, Connection> connections;  // by fd
  ServerState state;
  auto last_activity = std::chrono::steady_clock::now();
  for (;;) {
    int status = 0;
    for (pid_t done; (done = ::waitpid(-1, &status, WNOHANG)) > 0;)
      for (auto& [fd, c] : connections)
        if (c.busy == done) c.busy = 0;
    std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
    for (const auto& [fd, c] : connections) fds.push_back({fd, static_cast<short>(c.busy ? POLLRDHUP : POLLIN), 0});
    bool busy = false;
    for (const auto& [fd, c] : connections) busy = busy || c.busy != 0;
    if (daemon_stop) break;
    if (connections.empty() && std::chrono::steady_clock::now() - last_activity >= std::chrono::seconds(idle_seconds)) break;
    // Children are reaped at least every 50 ms while any runs (no SIGCHLD handler: nothing async here).
    const int n = ::poll(fds.data(), fds.size(), busy ? 50 : 1000);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    for (std::size_t k = 1; k < fds.size(); ++k) {
      const short ev = fds[k].revents;
      if (ev == 0) continue;
      Connection& c = connections[fds[k].fd];
      last_activity = std::chrono::steady_clock::now();
      if (c.busy) {
        // The caller went away before its answer (killed, timed out): its run is for no one. End the
        // child's process group, engine processes included.
        if (ev & (POLLRDHUP | POLLHUP | POLLERR)) {
          ::kill(-c.busy, SIGKILL);
          ::shutdown(c.fd, SHUT_RDWR);
        }
        continue;
      }
      std::string message;
      if (!(ev & POLLIN) || !recv_message(c.fd, message)) {  // end of input: the caller is done
        ::close(c.fd);
        connections.erase(fds[k].fd);
        continue;
      }
      EngineRequest request;
      const std::string decoded = framed([&] {
        request = decode_engine_request(message);
        return std::string();
      });
      if (decoded.empty() || decoded[0] != 'R') {  // not a request: answered here, nothing to run
        if (!send_message(c.fd, decoded)) {
          ::close(c.fd);
          connections.erase(fds[k].fd);
        }
        continue;
      }
      const pid_t pid = ::fork();
      if (pid < 0) {
        send_message(c.fd, framed([]() -> std::string { throw SimulationError("the engine daemon cannot fork"); }));
        continue;
      }
      if (pid == 0) {
        ::setpgid(0, 0);
        ::signal(SIGTERM, SIG_DFL);
        ::signal(SIGINT, SIG_DFL);
        ::close(listen_fd);
        for (const auto& [other, oc] : connections)
          if (other != c.fd) ::close(other);
        set_disposable_engine_process();
        const std::string reply = framed([&] {
          state.prepare(request);  // nothing to do when the daemon had it ready
          return state.run(request);
        });
        ::_exit(send_message(c.fd, reply) ? 0 : 1);
      }
      ::setpgid(pid, pid);  // both sides: the group exists before either can signal it
      c.busy = pid;
      // Ready the next child with what this one had to build, when it is small (a big platform would keep
      // the other callers waiting while this single-threaded loop builds it; its child builds its own).
      if (!state.prepared_for(request) && request.racks <= kDaemonCachedRacks)
        (void)framed([&] {
          state.prepare(request);
          return std::string();
        });
    }
    if (fds[0].revents & POLLIN) {
      const int conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) {
        connections[conn].fd = conn;
        last_activity = std::chrono::steady_clock::now();
      }
    }
  }
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
