#include "models/collectives/schedule_io.hpp"
#include "models/nccl/nccl_system.hpp"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/core/errors.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/units.hpp"

namespace racksim {

using nlohmann::json;

std::string endpoint_to_string(const Endpoint& e) {
  const char* kind = e.kind == Endpoint::Kind::rank ? "rank:" : e.kind == Endpoint::Kind::switch_plane ? "switch:" : "fabric:";
  return kind + std::to_string(e.index);
}

namespace {

json task_to_json(const Task& t) {
  json dsts = json::array();
  for (const auto& d : t.dsts) dsts.push_back(endpoint_to_string(d));
  return json{{"id", t.id},           {"src", endpoint_to_string(t.src)}, {"dsts", dsts},
              {"bytes", t.bytes},     {"chunk", t.chunk},                 {"chunk_count", t.chunk_count},
              {"reduce", t.reduce},   {"deps", t.deps},                   {"phase", t.phase}};
}

json request_to_json(const CollectiveRequest& r) {
  json j{{"op", to_string(r.op)},
              {"algorithm", r.algorithm},
              {"gpus", r.gpus},
              {"bytes", r.bytes},
              {"dtype", r.dtype},
              {"chunk_bytes", r.chunk_bytes},
              {"root", r.root},
              {"inner_algorithm", r.inner_algorithm},
              {"outer_algorithm", r.outer_algorithm},
              {"protocol", r.protocol},
              {"channels", r.channels}};
  // Written where it is not the default, so that 2.28's dumps stay as they were.
  if (r.nccl_version != "2.28") j["nccl_version"] = r.nccl_version;
  return j;
}

json exec_to_json(const ExecParams& e) {
  // Seconds as they are (no unit conversion): a dumped schedule reloads to the same bytes of results.
  return json{{"efficiency", e.efficiency},
              {"launch_s", e.launch_s},
              {"intra_step_s", e.intra_step_s},
              {"net_step_s", e.net_step_s},
              {"arch", e.arch},
              {"latency_at_launch", e.latency_at_launch},
              {"nic_efficiency", e.nic_efficiency > 0 ? e.nic_efficiency : e.efficiency}};
}

ExecParams read_exec(JsonObjectReader r) {
  ExecParams e;
  e.set = true;
  e.efficiency = r.number_in("efficiency", 1e-6, 2.0);
  e.launch_s = r.number_in("launch_s", 0.0, 1e3);
  e.intra_step_s = r.number_in("intra_step_s", 0.0, 1e3);
  e.net_step_s = r.number_in("net_step_s", 0.0, 1e3);
  e.arch = r.string_or("arch", "");
  e.latency_at_launch = r.boolean_or("latency_at_launch", false);
  e.nic_efficiency = r.number_in_or("nic_efficiency", 1e-6, 2.0, e.efficiency);
  r.finish();
  return e;
}

Endpoint parse_endpoint(const json& v, int ranks, const std::string& where, const std::string& pointer) {
  const std::string allowed =
      "\"rank:<r>\" with r in [0, " + std::to_string(ranks) + "), \"switch:<domain>\" or \"fabric:<rail>\"";
  if (!v.is_string()) throw InputError(where, pointer, json_excerpt(v), allowed);
  const std::string text = v.get<std::string>();
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string digits = colon == std::string::npos ? "" : text.substr(colon + 1);
  if ((kind != "rank" && kind != "switch" && kind != "fabric") || digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(where, pointer, "'" + text + "'", allowed);
  const int index = std::stoi(digits);
  if (kind == "rank" && index >= ranks) throw InputError(where, pointer, "'" + text + "'", allowed);
  if (kind == "fabric") return Endpoint::fabric_plane(index);
  return kind == "rank" ? Endpoint::rank(index) : Endpoint::switch_plane(index);
}

std::vector<int> int_array(const json& arr, long lo, long hi, const std::string& where, const std::string& pointer) {
  std::vector<int> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& v = arr[i];
    if (!v.is_number_integer() || v.get<long>() < lo || v.get<long>() > hi)
      throw InputError(where, pointer + "/" + std::to_string(i), json_excerpt(v),
                       hi < lo ? std::string("nothing (no valid value here)")
                               : "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(static_cast<int>(v.get<long>()));
  }
  return out;
}

CollectiveRequest read_request(JsonObjectReader r) {
  CollectiveRequest q;
  q.op = collective_op_from_string(r.one_of("op", collective_op_names()), r.where() + ": " + r.pointer_of("op"));
  q.algorithm = r.string("algorithm");
  q.gpus = int_array(r.array("gpus"), 0, 1 << 30, r.where(), r.pointer_of("gpus"));
  if (q.gpus.empty()) r.fail("gpus", "[]", "at least one GPU index");
  q.bytes = static_cast<std::uint64_t>(r.integer_in("bytes", 1, static_cast<long>(units::kMaxBytesPerRank)));
  q.dtype = r.string_or("dtype", "float");
  dtype_size_bytes(q.dtype, r.where() + ": " + r.pointer_of("dtype"));
  q.chunk_bytes = static_cast<std::uint64_t>(r.integer_in_or("chunk_bytes", 0, static_cast<long>(units::kMaxBytesPerRank), 0));
  q.root = static_cast<int>(r.integer_in_or("root", 0, static_cast<long>(q.gpus.size()) - 1, 0));
  q.inner_algorithm = r.one_of_or("inner_algorithm", {"auto", "ring", "nvls"}, "auto");
  q.outer_algorithm = r.one_of_or("outer_algorithm", {"ring", "tree"}, "ring");
  q.protocol = r.one_of_or("protocol", {"auto", "LL", "LL128", "Simple"}, "auto");
  q.channels = static_cast<int>(r.integer_in_or("channels", 0, 64, 0));
  q.nccl_version = r.string_or("nccl_version", "2.28");
  nccl::tuner_release(q.nccl_version, r.where() + ": " + r.pointer_of("nccl_version"));
  r.finish();
  return q;
}

}  // namespace

std::string schedule_to_json_text(const Schedule& s) {
  // A quotient lists one task per orbit: as JSON it would read as a smaller collective (nothing says what it
  // stands for), so it is never written; `racksim schedule` dumps build_schedule's full schedule.
  if (s.symmetry) throw SimulationError("internal: " + s.algorithm + " listed by its symmetry has no JSON form");
  json head{{"schema_version", kScheduleSchemaVersion},
            {"algorithm", s.algorithm},
            {"chunks", s.chunks},
            {"note", s.note},
            {"phases", s.phases},
            {"request", request_to_json(s.request)},
            {"tasks", json::array()}};
  if (s.exec.set) head["exec"] = exec_to_json(s.exec);
  if (!s.warnings.empty()) head["warnings"] = s.warnings;
  if (s.nccl_chunks > 0) head["lowered_pipeline"] = {{"pieces", s.pipeline_pieces}, {"nccl_chunks", s.nccl_chunks}};
  std::string text = dump_json(head, 2);
  // Splice the tasks in, one per line: readable and diffable even with 100 k tasks.
  const std::string empty = "\"tasks\": []";
  const auto at = text.find(empty);
  std::string tasks = "\"tasks\": [";
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    tasks += (i ? ",\n    " : "\n    ") + dump_json(task_to_json(s.tasks[i]));
  }
  tasks += s.tasks.empty() ? "]" : "\n  ]";
  text.replace(at, empty.size(), tasks);
  return text + "\n";
}

Schedule schedule_from_json_text(const std::string& text, const std::string& where) {
  const json doc = parse_json_text(text, where);
  JsonObjectReader root(doc, where);
  Schedule s;
  root.integer_in("schema_version", kScheduleSchemaVersion, kScheduleSchemaVersion);
  s.request = read_request(root.object("request"));
  s.algorithm = root.string("algorithm");
  const std::string prefix = std::string(to_string(s.request.op)) + "/";
  if (s.algorithm.rfind(prefix, 0) != 0)
    root.fail("algorithm", "'" + s.algorithm + "'", "a name starting with '" + prefix + "' (the request's op)");
  s.chunks = static_cast<int>(root.integer_in("chunks", 1, 1L << 30));
  if (root.has("note")) {
    const auto& note = root.raw("note");
    if (!note.is_string()) root.fail("note", json_excerpt(note), "a string");
    s.note = note.get<std::string>();
  }
  if (root.has("exec")) s.exec = read_exec(root.object("exec"));
  if (root.has("lowered_pipeline")) {  // the builder ran fewer pieces than NCCL's chunks (Schedule::nccl_chunks)
    JsonObjectReader lp = root.object("lowered_pipeline");
    s.nccl_chunks = lp.integer_in("nccl_chunks", 2, std::numeric_limits<long>::max());
    s.pipeline_pieces = lp.integer_in("pieces", 1, s.nccl_chunks - 1);
    lp.finish();
  }
  if (root.has("warnings")) {
    const auto& w = root.array("warnings");
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!w[i].is_string()) throw InputError(where, "/warnings/" + std::to_string(i), json_excerpt(w[i]), "a string");
      s.warnings.push_back(w[i].get<std::string>());
    }
  }
  const auto& phases = root.array("phases");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (!phases[i].is_string())
      throw InputError(where, "/phases/" + std::to_string(i), json_excerpt(phases[i]), "a phase name");
    s.phases.push_back(phases[i].get<std::string>());
  }
  const int ranks = static_cast<int>(s.request.gpus.size());
  const auto& tasks = root.array("tasks");
  s.tasks.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    JsonObjectReader r = array_element(tasks, i, where, "/tasks");
    Task t;
    t.id = static_cast<int>(r.integer_in("id", static_cast<long>(i), static_cast<long>(i)));
    t.src = parse_endpoint(r.raw("src"), ranks, where, r.pointer_of("src"));
    const auto& dsts = r.array("dsts");
    if (dsts.empty()) r.fail("dsts", "[]", "at least one destination");
    for (std::size_t j = 0; j < dsts.size(); ++j)
      t.dsts.push_back(parse_endpoint(dsts[j], ranks, where, r.pointer_of("dsts") + "/" + std::to_string(j)));
    t.bytes = static_cast<std::uint64_t>(r.integer_in("bytes", 0, static_cast<long>(units::kMaxBytesPerRank)));
    t.chunk = static_cast<int>(r.integer_in("chunk", 0, s.chunks - 1));
    t.chunk_count = static_cast<int>(r.integer_in_or("chunk_count", 1, s.chunks - t.chunk, 1));
    t.reduce = r.boolean("reduce");
    t.deps = int_array(r.array("deps"), 0, static_cast<long>(i) - 1, where, r.pointer_of("deps"));  // backwards
    if (s.phases.empty()) r.fail("phase", "any", "a schedule with at least one phase name");
    t.phase = static_cast<int>(r.integer_in("phase", 0, static_cast<long>(s.phases.size()) - 1));
    r.finish();
    s.tasks.push_back(std::move(t));
  }
  root.finish();
  return s;
}

Schedule load_schedule_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "'" + path + "'", "an existing, readable schedule JSON file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return schedule_from_json_text(buffer.str(), path);
}

}  // namespace racksim
