#include "models/jobs/job_mix.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "models/fabric/imex.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/named_json_files.hpp"
#include "sim/core/units.hpp"
#include "sim/topo/topology_graph.hpp"

#ifndef RACKSIM_TOPOLOGY_DIR
#error "RACKSIM_TOPOLOGY_DIR must be defined by the build"
#endif

namespace racksim {

namespace {

constexpr int kMaxJobs = 1024;          // far more than a rack pod runs side by side
constexpr int kMaxCollectives = 256;    // per job
constexpr int kMaxRepeat = 1000;

// Unknown keys first, so that a misspelt key is named even when it makes a required one look missing.
void reject_unknown(const nlohmann::json& object, const std::string& where, const std::string& pointer,
                    std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    std::string list;
    for (const char* a : allowed) {
      known = known || key == a;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    if (!known) throw InputError(where, pointer + "/" + key, "unknown key '" + key + "'", "the keys " + list);
  }
}

std::string name_or(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : json_excerpt(v); }

JobCollective read_collective(JsonObjectReader r, const nlohmann::json& object) {
  reject_unknown(object, r.where(), r.pointer(), {"op", "bytes", "algo", "inner", "dim", "repeat"});
  JobCollective c;
  c.op = collective_op_from_string(r.string("op"), r.where() + " " + r.pointer_of("op"));
  c.algorithm = r.string_or("algo", "auto");
  if (r.has("inner")) {  // the CLI's --inner: what racksim's hierarchical runs inside each NVLink domain
    if (c.algorithm != "hierarchical")
      r.fail("inner", json_excerpt(r.raw("inner")), "no \"inner\" unless \"algo\" is \"hierarchical\" (the algorithm inside each NVLink domain)");
    c.inner_algorithm = r.one_of("inner", {"auto", "ring", "nvls"});
  }
  const nlohmann::json& bytes = r.raw("bytes");
  const std::string where = r.where() + " " + r.pointer_of("bytes");
  if (bytes.is_string()) {
    c.bytes = units::parse_bytes(bytes.get<std::string>(), where);
  } else if (bytes.is_number_unsigned() || (bytes.is_number_integer() && bytes.get<long long>() > 0)) {
    c.bytes = bytes.get<std::uint64_t>();
  } else {
    r.fail("bytes", json_excerpt(bytes), "a size such as \"1G\", \"64M\" or a positive integer of bytes");
  }
  if (c.bytes == 0 || c.bytes > units::kMaxBytesPerRank)
    r.fail("bytes", std::to_string(c.bytes), "1 B to 1 TiB per rank");
  c.dim = r.string_or("dim", "");
  c.repeat = static_cast<int>(r.integer_in_or("repeat", 1, kMaxRepeat, 1));
  r.finish();
  return c;
}

JobMix::RawJob read_job(JsonObjectReader r, const nlohmann::json& object) {
  reject_unknown(object, r.where(), r.pointer(),
                 {"name", "trays", "gpus", "partition", "mesh_shape", "mesh_dim_names", "collectives", "step"});
  JobMix::RawJob j;
  j.where = r.pointer();
  j.name = r.string("name");
  if (j.name.empty() || j.name.size() > 64) r.fail("name", "'" + j.name + "'", "1 to 64 characters");
  int placements = 0;
  if (r.has("trays")) {
    j.trays = r.string("trays");
    ++placements;
  }
  if (r.has("partition")) {
    j.partition = r.string("partition");
    ++placements;
  }
  if (r.has("gpus")) {
    const nlohmann::json& g = r.raw("gpus");
    if (g.is_string()) {
      j.gpus_text = g.get<std::string>();
    } else if (g.is_array() && !g.empty()) {
      for (const auto& x : g) {
        if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > 10'000'000)
          r.fail("gpus", json_excerpt(x), "global GPU indices (non-negative integers)");
        j.gpus_order.push_back(x.get<int>());
      }
    } else {
      r.fail("gpus", json_excerpt(g), "a list such as \"0-31\" or an array of GPU indices in rank order");
    }
    ++placements;
  }
  if (placements != 1)
    throw InputError(r.where(), r.pointer(), std::to_string(placements) + " placements",
                     "exactly one of trays, gpus, partition");
  if (r.has("mesh_shape")) {
    const nlohmann::json& shape = r.array("mesh_shape");
    for (const auto& x : shape) {
      if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > 1'000'000)
        r.fail("mesh_shape", json_excerpt(x), "positive integers");
      j.mesh_shape.push_back(x.get<int>());
    }
    if (j.mesh_shape.empty()) r.fail("mesh_shape", "[]", "at least one dimension");
  }
  if (r.has("mesh_dim_names")) {
    for (const auto& x : r.array("mesh_dim_names")) {
      if (!x.is_string() || x.get<std::string>().empty()) r.fail("mesh_dim_names", json_excerpt(x), "non-empty names");
      j.mesh_dim_names.push_back(x.get<std::string>());
    }
    if (j.mesh_dim_names.size() != j.mesh_shape.size())
      r.fail("mesh_dim_names", std::to_string(j.mesh_dim_names.size()) + " names",
             "one name per mesh_shape dimension (" + std::to_string(j.mesh_shape.size()) + ")");
    std::set<std::string> unique(j.mesh_dim_names.begin(), j.mesh_dim_names.end());
    if (unique.size() != j.mesh_dim_names.size()) r.fail("mesh_dim_names", "a repeated name", "distinct names");
  } else if (!j.mesh_shape.empty()) {
    r.fail("mesh_dim_names", "(missing)", "one name per mesh_shape dimension");
  }
  if (r.has("step") == r.has("collectives"))
    throw InputError(r.where(), r.pointer(), r.has("step") ? "both collectives and step" : "neither collectives nor step",
                     "exactly one of collectives (a list) and step (a planner training step)");
  if (r.has("step")) {
    const nlohmann::json& st = r.raw("step");
    if (!st.is_object()) r.fail("step", json_excerpt(st), "an object {model, global_batch, seq_len}");
    reject_unknown(st, r.where(), r.pointer_of("step"), {"model", "global_batch", "seq_len"});
    JsonObjectReader sr(st, r.where(), r.pointer_of("step"));
    JobStepSpec step;
    step.model = sr.string("model");
    step.global_batch = static_cast<int>(sr.integer_in("global_batch", 1, 100'000'000));
    step.seq_len = static_cast<int>(sr.integer_in("seq_len", 1, 10'000'000));
    sr.finish();
    if (!j.mesh_shape.empty()) r.fail("mesh_shape", "given with step", "no mesh: a step job takes the planner's layout");
    j.step = step;
  } else {
    const nlohmann::json& list = r.array("collectives");
    if (list.empty() || list.size() > kMaxCollectives)
      r.fail("collectives", std::to_string(list.size()) + " items", "1 to " + std::to_string(kMaxCollectives) + " collectives");
    for (std::size_t i = 0; i < list.size(); ++i)
      j.collectives.push_back(read_collective(array_element(list, i, r.where(), r.pointer_of("collectives")), list[i]));
  }
  r.finish();
  return j;
}

// The shipped job mixes, scenarios/<id>.json, next to topologies/ in the source tree.
NamedJsonFiles scenario_files() {
  return NamedJsonFiles((std::filesystem::path(RACKSIM_TOPOLOGY_DIR).parent_path() / "scenarios").string(), "scenario",
                        "a job-mix JSON file");
}

}  // namespace

JobMix job_mix_from_json_text(const std::string& text, const std::string& where) {
  const nlohmann::json doc = parse_json_text(text, where);
  if (!doc.is_object()) throw InputError(where, "", json_excerpt(doc), "a JSON object (a job mix)");
  reject_unknown(doc, where, "", {"schema_version", "name", "system", "racks", "partitions", "partition_mode",
                                  "calibration", "oversubscription", "failures", "jobs"});
  JsonObjectReader r(doc, where);
  r.integer_in("schema_version", 1, 1);
  JobMix mix;
  mix.name = r.string_or("name", "");
  mix.system = r.string("system");
  if (r.has("racks")) mix.racks = static_cast<int>(r.integer_in("racks", 1, 4096));
  mix.partitions = r.string_or("partitions", "");
  mix.mode = partition_mode_from_string(r.string_or("partition_mode", "full-bandwidth"), where + " /partition_mode");
  mix.calibration = r.string_or("calibration", "default");
  if (r.has("oversubscription")) mix.oversubscription = r.number_in("oversubscription", 1, 1000);
  if (r.has("failures"))
    for (const auto& item : r.array("failures")) {
      if (!item.is_string()) throw InputError(where, "/failures", name_or(item), "failure items such as \"tray:7\"");
      parse_failure_item(item.get<std::string>());  // form checked here; ids against the system later
      mix.failures.push_back(item.get<std::string>());
    }
  const nlohmann::json& jobs = r.array("jobs");
  if (jobs.empty() || jobs.size() > kMaxJobs)
    r.fail("jobs", std::to_string(jobs.size()) + " jobs", "1 to " + std::to_string(kMaxJobs) + " jobs");
  std::set<std::string> names;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    mix.jobs.push_back(read_job(array_element(jobs, i, where, "/jobs"), jobs[i]));
    if (!names.insert(mix.jobs.back().name).second)
      throw InputError(where, "/jobs/" + std::to_string(i) + "/name", "'" + mix.jobs.back().name + "'", "distinct job names");
  }
  r.finish();
  return mix;
}

std::vector<std::string> shipped_job_mixes() { return scenario_files().ids(); }

JobMix load_job_mix(const std::string& name_or_path) {
  const std::string path = scenario_files().resolve(name_or_path, "jobs");
  const nlohmann::json doc = parse_json_file(path);
  return job_mix_from_json_text(doc.dump(), path);
}

std::vector<JobSpec> resolve_jobs(const JobMix& mix, const TopologyGraph& g) {
  std::vector<JobSpec> out;
  std::map<int, std::string> owner;
  const int per_tray = g.gpus_per_tray();
  for (const auto& raw : mix.jobs) {
    JobSpec j;
    j.name = raw.name;
    const std::string where = "job " + raw.name;
    if (!raw.trays.empty()) {
      j.placement = "trays " + raw.trays;
      for (int t : fabric::parse_index_list(raw.trays, g.gpu_count() / per_tray, where + " trays"))
        for (int i = 0; i < per_tray; ++i) j.gpus.push_back(t * per_tray + i);
    } else if (!raw.partition.empty()) {
      j.placement = "partition " + raw.partition;
      for (const auto& p : g.partitioning().partitions)
        if (p.name == raw.partition) j.gpus = p.gpus;
      if (j.gpus.empty()) {
        std::string names;
        for (const auto& p : g.partitioning().partitions) names += (names.empty() ? "" : ", ") + p.name;
        throw InputError(where, raw.where + "/partition", "'" + raw.partition + "'",
                         names.empty() ? "a partition of the mix's \"partitions\" (none are given)" : "one of " + names);
      }
    } else if (!raw.gpus_text.empty()) {
      j.placement = "gpus " + raw.gpus_text;
      j.gpus = fabric::parse_index_list(raw.gpus_text, g.gpu_count(), where + " gpus");
    } else {
      j.placement = "gpus in the order given";
      j.gpus = raw.gpus_order;
      for (int gpu : j.gpus)
        if (gpu >= g.gpu_count())
          throw InputError(where, raw.where + "/gpus", std::to_string(gpu),
                           "GPU indices in [0, " + std::to_string(g.gpu_count() - 1) + "]");
    }
    for (int gpu : j.gpus) {
      auto [it, added] = owner.emplace(gpu, j.name);
      if (!added)
        throw InputError(where, raw.where, "GPU " + std::to_string(gpu) + " (also in job " + it->second + ")",
                         "each GPU in at most one job");
    }
    j.mesh_shape = raw.mesh_shape.empty() ? std::vector<int>{static_cast<int>(j.gpus.size())} : raw.mesh_shape;
    j.mesh_dim_names = raw.mesh_dim_names.empty() ? std::vector<std::string>{"world"} : raw.mesh_dim_names;
    long product = 1;
    for (int s : j.mesh_shape) product *= s;
    if (product != static_cast<long>(j.gpus.size()))
      throw InputError(where, raw.where + "/mesh_shape", "product " + std::to_string(product),
                       "the job's GPU count (" + std::to_string(j.gpus.size()) + ")");
    j.collectives = raw.collectives;
    j.step = raw.step;
    for (std::size_t k = 0; k < j.collectives.size(); ++k) {
      const std::string& dim = j.collectives[k].dim;
      if (!dim.empty() && std::find(j.mesh_dim_names.begin(), j.mesh_dim_names.end(), dim) == j.mesh_dim_names.end()) {
        std::string names;
        for (const auto& n : j.mesh_dim_names) names += (names.empty() ? "" : ", ") + n;
        throw InputError(where, raw.where + "/collectives/" + std::to_string(k) + "/dim", "'" + dim + "'",
                         "a mesh dimension (" + names + ") or none for every rank");
      }
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<std::vector<int>> mesh_groups(const JobSpec& job, const std::string& dim) {
  if (dim.empty()) return {job.gpus};
  const auto it = std::find(job.mesh_dim_names.begin(), job.mesh_dim_names.end(), dim);
  if (it == job.mesh_dim_names.end())
    throw InputError("job " + job.name, "", "'" + dim + "'", "one of the job's mesh dimensions");
  const std::size_t d = static_cast<std::size_t>(it - job.mesh_dim_names.begin());
  long stride = 1;  // row-major: the last dimension varies fastest
  for (std::size_t k = d + 1; k < job.mesh_shape.size(); ++k) stride *= job.mesh_shape[k];
  const long size = job.mesh_shape[d], n = static_cast<long>(job.gpus.size());
  std::vector<std::vector<int>> groups;
  for (long r = 0; r < n; ++r) {
    if ((r / stride) % size != 0) continue;  // the group's first member has coordinate 0 along dim
    std::vector<int> g;
    for (long k = 0; k < size; ++k) g.push_back(job.gpus[r + k * stride]);
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace racksim
