#include "sim/engine/result_wire.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/core/errors.hpp"
#include "sim/core/wire.hpp"

namespace racksim {

using wire::Reader;
using wire::Writer;

std::string encode_run_results(const std::vector<RunResult>& results) {
  Writer w;
  w.pod<std::uint64_t>(results.size());
  for (const auto& r : results) {
    w.str(r.system);
    w.pod(r.racks);
    w.str(r.op);
    w.str(r.algorithm);
    w.str(r.algorithm_note);
    w.pod(r.gpus);
    w.pod(r.bytes);
    w.pod(r.chunk_bytes);
    w.pod(r.time_s);
    w.pod(r.algbw_Bps);
    w.pod(r.busbw_Bps);
    w.pod<std::uint64_t>(r.phases.size());
    for (const auto& p : r.phases) {
      w.str(p.name);
      w.pod(p.time_s);
    }
    w.pod<std::uint64_t>(r.links.size());
    for (const auto& l : r.links) {
      w.str(l.name);
      w.str(l.kind);
      w.pod(l.bytes);
      w.pod(l.busy_s);
      w.pod(l.max_utilization);
    }
    w.pod<std::uint64_t>(r.trace.size());
    for (const auto& e : r.trace) {
      w.str(e.track);
      w.str(e.name);
      w.pod(e.start_s);
      w.pod(e.end_s);
    }
    w.str(r.calibration);
    w.strs(r.failures);
    w.pod<std::uint8_t>(r.heldout_error ? 1 : 0);
    if (r.heldout_error) encode_heldout_error(w, *r.heldout_error);
    w.str(r.engine.mode);
    w.pod(r.engine.tasks);
    w.pod(r.engine.simulated_tasks);
    w.str(r.engine.note);
  }
  return w.take();
}

std::vector<RunResult> decode_run_results(const std::string& bytes) {
  Reader rd(bytes, "result from the engine process");
  std::vector<RunResult> results(rd.count());
  for (auto& r : results) {
    r.system = rd.str();
    r.racks = rd.pod<int>();
    r.op = rd.str();
    r.algorithm = rd.str();
    r.algorithm_note = rd.str();
    r.gpus = rd.pod<int>();
    r.bytes = rd.pod<std::uint64_t>();
    r.chunk_bytes = rd.pod<std::uint64_t>();
    r.time_s = rd.pod<double>();
    r.algbw_Bps = rd.pod<double>();
    r.busbw_Bps = rd.pod<double>();
    r.phases.resize(rd.count());
    for (auto& p : r.phases) {
      p.name = rd.str();
      p.time_s = rd.pod<double>();
    }
    r.links.resize(rd.count());
    for (auto& l : r.links) {
      l.name = rd.str();
      l.kind = rd.str();
      l.bytes = rd.pod<double>();
      l.busy_s = rd.pod<double>();
      l.max_utilization = rd.pod<double>();
    }
    r.trace.resize(rd.count());
    for (auto& e : r.trace) {
      e.track = rd.str();
      e.name = rd.str();
      e.start_s = rd.pod<double>();
      e.end_s = rd.pod<double>();
    }
    r.calibration = rd.str();
    r.failures = rd.strs();
    if (rd.pod<std::uint8_t>() != 0) r.heldout_error = decode_heldout_error(rd);
    r.engine.mode = rd.str();
    r.engine.tasks = rd.pod<int>();
    r.engine.simulated_tasks = rd.pod<int>();
    r.engine.note = rd.str();
  }
  if (!rd.done()) throw SimulationError("internal: trailing bytes in a result from the engine process");
  return results;
}

}  // namespace racksim
