#include "sim/engine/engine_server.hpp"

#include <cstdint>
#include <string>

#include "sim/core/wire.hpp"

// The engine request's binary encoding (engine_server.hpp): what the CLI or a threaded caller sends to the
// engine server or daemon, schedules as raw fields.
namespace racksim {

namespace {

using wire::Reader;
using wire::Writer;
constexpr const char* kWhat = "request to the engine server";

// Schedules travel as raw fields. Adding a field to Task, Schedule or CollectiveRequest changes their
// sizes and stops the build here: encode it below (and in decode), then update the sizes.
static_assert(sizeof(Task) == 96 && sizeof(Schedule) == 528 && sizeof(CollectiveRequest) == 264 && sizeof(ExecParams) == 88,
              "a schedule struct changed: update encode_schedule/decode_schedule in engine_request.cpp");

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
  w.pod<std::uint8_t>(q.collnet_enabled);
  w.pod(q.ib_qps_per_connection);
  w.str(q.nccl_version);
  w.str(q.inner_algorithm);
  w.str(q.outer_algorithm);
  w.str(s.algorithm);
  w.pod(s.chunks);
  w.strs(s.phases);
  w.str(s.note);
  w.strs(s.warnings);
  w.pod(s.pipeline_pieces);
  w.pod(s.nccl_chunks);
  const ExecParams& e = s.exec;
  w.pod<std::uint8_t>(e.set);
  w.pod(e.efficiency);
  w.pod(e.launch_s);
  w.pod(e.intra_step_s);
  w.pod(e.net_step_s);
  w.str(e.arch);
  w.pod<std::uint8_t>(e.latency_at_launch);
  w.pod(e.nic_efficiency);
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
  w.pod<std::uint8_t>(s.symmetry != nullptr);
  if (s.symmetry) {
    w.pod(s.symmetry->full_tasks);
    w.pod<std::uint64_t>(s.symmetry->rank_maps.size());
    for (const auto& map : s.symmetry->rank_maps) {
      w.pod<std::uint64_t>(map.size());
      for (int r : map) w.pod(r);
    }
    w.pod<std::uint64_t>(s.symmetry->mean_bytes.size());
    for (double b : s.symmetry->mean_bytes) w.pod(b);
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
  q.collnet_enabled = rd.pod<std::uint8_t>() != 0;
  q.ib_qps_per_connection = rd.pod<int>();
  q.nccl_version = rd.str();
  q.inner_algorithm = rd.str();
  q.outer_algorithm = rd.str();
  s.algorithm = rd.str();
  s.chunks = rd.pod<int>();
  s.phases = rd.strs();
  s.note = rd.str();
  s.warnings = rd.strs();
  s.pipeline_pieces = rd.pod<long>();
  s.nccl_chunks = rd.pod<long>();
  ExecParams& e = s.exec;
  e.set = rd.pod<std::uint8_t>() != 0;
  e.efficiency = rd.pod<double>();
  e.launch_s = rd.pod<double>();
  e.intra_step_s = rd.pod<double>();
  e.net_step_s = rd.pod<double>();
  e.arch = rd.str();
  e.latency_at_launch = rd.pod<std::uint8_t>() != 0;
  e.nic_efficiency = rd.pod<double>();
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
  if (rd.pod<std::uint8_t>() != 0) {
    auto symmetry = std::make_shared<ScheduleSymmetry>();
    symmetry->full_tasks = rd.pod<long>();
    symmetry->rank_maps.resize(rd.count());
    for (auto& map : symmetry->rank_maps) {
      map.resize(rd.count());
      for (int& r : map) r = rd.pod<int>();
    }
    symmetry->mean_bytes.resize(rd.count());
    for (double& b : symmetry->mean_bytes) b = rd.pod<double>();
    s.symmetry = std::move(symmetry);
  }
  return s;
}

// About the bytes put_schedule writes for `s` (the short strings of the request inside kHeaderBytes),
// reserved before encoding so that a 10 224-task schedule (~0.6 MB) is not copied through a dozen string
// growths. A reserve, not a limit: more only grows the string.
std::size_t encoded_size_bound(const Schedule& s) {
  constexpr std::size_t kHeaderBytes = 512;  // the request's and the exec parameters' fixed fields
  constexpr std::size_t kTaskFixedBytes = 4 + 5 + 8 + 8 + 4 + 4 + 1 + 8 + 4;  // put_schedule's per-task fields
  std::size_t bytes = kHeaderBytes + s.request.algorithm.size() + s.request.gpus.size() * 4 + s.algorithm.size() +
                      s.note.size() + s.exec.arch.size();
  for (const auto& p : s.phases) bytes += 8 + p.size();
  for (const auto& x : s.warnings) bytes += 8 + x.size();
  for (const Task& t : s.tasks) bytes += kTaskFixedBytes + 5 * t.dsts.size() + 4 * t.deps.size();
  if (s.symmetry) {
    for (const auto& map : s.symmetry->rank_maps) bytes += 8 + 4 * map.size();
    bytes += 8 + 8 * s.symmetry->mean_bytes.size();
  }
  return bytes;
}
}  // namespace

std::string encode_engine_request(const EngineRequest& r) {
  Writer w;
  std::size_t bound = r.topology_json.size() + r.calibration_json.size() + r.partitions.size() + 1024;
  for (const Schedule* s : r.schedule_ptrs) bound += encoded_size_bound(*s);
  for (const Schedule& s : r.schedules) bound += encoded_size_bound(s);
  w.reserve(bound);
  w.pod(static_cast<std::uint8_t>(r.kind));
  w.str(r.topology_json);
  w.pod(r.racks);
  w.str(r.partitions);
  w.str(r.calibration_json);
  w.strs(r.failures);
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

namespace {
// What names the Simulation (ServerState::key_of): the start of every request, so that the daemon can
// read it without decoding the schedules.
void get_head(Reader& rd, EngineRequest& r) {
  r.kind = static_cast<EngineRequest::Kind>(rd.pod<std::uint8_t>());
  r.topology_json = rd.str();
  r.racks = rd.pod<int>();
  r.partitions = rd.str();
  r.calibration_json = rd.str();
  r.failures = rd.strs();
  r.partition_mode = rd.str();
}

void get_body(Reader& rd, EngineRequest& r) {
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
}

// The request's head alone (its key; no schedules) and how many bytes of `bytes` it took.
}  // namespace

EngineRequest decode_engine_request_head(const std::string& bytes, std::size_t& head_bytes) {
  Reader rd(bytes, kWhat);
  EngineRequest r;
  get_head(rd, r);
  head_bytes = rd.position();
  return r;
}

namespace {
// The head's kind and racks, its texts stepped over (get_head's order).
void skip_head(Reader& rd, EngineRequest& r) {
  r.kind = static_cast<EngineRequest::Kind>(rd.pod<std::uint8_t>());
  rd.skip_str();  // topology_json
  r.racks = rd.pod<int>();
  rd.skip_str();  // partitions
  rd.skip_str();  // calibration_json
  rd.skip_strs();  // failures
  rd.skip_str();  // partition_mode
}

EngineRequest decode_with(const std::string& bytes, void (*head)(Reader&, EngineRequest&)) {
  Reader rd(bytes, kWhat);
  EngineRequest r;
  head(rd, r);
  get_body(rd, r);
  return r;
}
}  // namespace

EngineRequest decode_engine_request(const std::string& bytes) { return decode_with(bytes, get_head); }

EngineRequest decode_engine_request_body(const std::string& bytes) { return decode_with(bytes, skip_head); }

std::size_t engine_request_head_bytes(const std::string& bytes) {
  Reader rd(bytes, kWhat);
  EngineRequest r;
  skip_head(rd, r);
  return rd.position();
}

std::string encode_schedule(const Schedule& schedule) {
  Writer w;
  put_schedule(w, schedule);
  return w.take();
}

Schedule decode_schedule(const std::string& bytes) {
  Reader rd(bytes, kWhat);
  return get_schedule(rd);
}

}  // namespace racksim
