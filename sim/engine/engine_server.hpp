#pragma once
// The engine server: how a multi-threaded process (a Jupyter kernel, Python threads, a threaded host
// program) runs simulations without ever forking itself (engine_process.hpp says why it must not).
//
// The caller serialises what a Simulation needs (the topology spec and the calibration as their JSON,
// the failure items as their text: public, tested round trips; the schedules in a binary encoding, 100x
// cheaper than their JSON for a 10 000-task schedule, guarded by a static_assert on the structs' sizes and
// a round-trip test against schedule_io) and sends it over a socket to `racksim-engine`, an executable started with posix_spawn (safe with threads: no atfork, no
// copied locks). The server is single-threaded; it rebuilds the Simulation (kept while the next request
// names the same system, racks, calibration and failures) and runs it the usual way: a forked engine
// process per run. Results come back in the exact binary encoding of result_wire.hpp, so they are
// bit-identical to a direct run. One server serves one request at a time; concurrent callers get servers
// of their own (started on demand, kept idle for the next call, ended with the process).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/simulation.hpp"

namespace racksim {

class TopologyGraph;

struct EngineRequest {
  enum class Kind : std::uint8_t { concurrent = 'C', after = 'A', each = 'E', transfers = 'T' };
  Kind kind = Kind::concurrent;
  std::string topology_json, calibration_json;
  int racks = 1;
  std::string partitions;                   // the graph's NVLink partitioning as given ("" when none)
  std::vector<std::string> failures;        // item texts
  std::string partition_mode = "full-bandwidth";
  std::vector<std::vector<int>> after;      // after: start dependencies (Simulation::run_after)
  std::vector<Schedule> schedules;           // concurrent, after, each (decoded)
  std::vector<const Schedule*> schedule_ptrs;  // the same when encoding (not copied)
  std::vector<DeviceTransfer> transfers;    // transfers
  RunOptions options;
  int jobs = 1;                             // each: engine processes at once
  std::uint64_t address_space_limit = 0;    // the caller's RLIMIT_AS (0: none), applied by the server
};

std::string encode_engine_request(const EngineRequest& request);
EngineRequest decode_engine_request(const std::string& bytes);
// The request's head alone (what names its Simulation; no schedules) and how many bytes of `bytes` it took:
// the daemon reads it to prepare the next Simulation without decoding the schedules.
EngineRequest decode_engine_request_head(const std::string& bytes, std::size_t& head_bytes);
// How many bytes of `bytes` its head takes, without copying its texts.
std::size_t engine_request_head_bytes(const std::string& bytes);
// The request's kind, racks and body, its head's texts (topology, partitions, calibration, failures) stepped
// over, not copied: for a server already prepared for that head (ServerState::prepared_for_head).
EngineRequest decode_engine_request_body(const std::string& bytes);
// The binary encoding of one schedule (exposed for its round-trip test).
std::string encode_schedule(const Schedule& schedule);
Schedule decode_schedule(const std::string& bytes);

// Sends the request to an engine server and returns the results (or re-throws its InputError /
// SimulationError). SimulationError when no server can be started. A process that has the SimGrid engine
// (local_engine.hpp) uses a server of its own, spawned on demand; one without it (the CLI) uses the warm
// engine daemon below, started on first use, unless RACKSIM_ENGINE_DAEMON=off (then a server of its own too).
std::vector<RunResult> run_on_engine_server(const EngineRequest& request);

// The warm engine daemon (issue 14): `racksim-engine --daemon PATH` listens on a Unix socket in a directory
// of this user's only ($XDG_RUNTIME_DIR, else /tmp/racksim-<uid>, mode 0700), named after the engine
// executable's identity (a rebuilt engine gets a daemon of its own), and ends after kDaemonIdleSeconds
// without a connection. Each request is served by a child in its own process group, forked ahead from the
// daemon's prepared Simulation (the spare: the fork and its copy-on-write faults are not on the request's
// path), which runs the engine in place or forks the engine processes as a server does; when the caller
// goes away before its answer (killed, timed out) the daemon kills that group. Results are the same bytes
// as a direct run.
inline constexpr int kDaemonIdleSeconds = 60;
std::string engine_daemon_socket_path();
// The daemon's loop; `ready_fd` (>= 0) gets one byte once the socket listens (or the daemon found another
// one already listening there) and is closed. Returns the exit status.
int serve_engine_daemon(const std::string& socket_path, int ready_fd, int idle_seconds = kDaemonIdleSeconds);

// The server's loop: reads length-prefixed requests from `in_fd`, answers each on `out_fd`, returns at
// end of input. Used by the racksim-engine executable.
int serve_engine_requests(int in_fd, int out_fd);

}  // namespace racksim
