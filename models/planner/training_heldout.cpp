#include "models/planner/training_heldout.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "models/workload/gpu_compute.hpp"
#include "models/workload/model_catalog.hpp"
#include "sim/core/error_summary_json.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/statistics.hpp"

namespace racksim {

namespace {

constexpr long kSchemaVersion = 1;

struct Pool {
  std::vector<double> errors;
  std::set<std::string> models, systems;
};

void add_rows(const TrainingValidation& v, const std::string& held_out, const ModelCatalog& catalog,
              std::map<std::tuple<std::string, std::string, std::string>, Pool>& pools) {
  std::map<std::string, bool> moe;
  for (const RowPrediction& p : v.rows) {
    const std::string& m = p.run.model;
    if (!moe.count(m)) moe[m] = catalog.load(m, "training held-out table").is_moe();
    Pool& pool = pools[{p.generation, moe[m] ? "moe" : "dense", held_out}];
    pool.errors.push_back(p.error);
    pool.models.insert(m);
    pool.systems.insert(p.run.system);
  }
}

// Beside the shipped fit (calibrate/training/compute-fit.json).
std::string path_of_shipped() {
  return (std::filesystem::path(ComputeTable::shipped_fit_path()).parent_path() / "heldout_errors.json").string();
}

}  // namespace

TrainingHeldoutTable training_heldout_table(const TrainingValidation& by_model, const TrainingValidation& by_system) {
  const ModelCatalog catalog = ModelCatalog::shipped();
  std::map<std::tuple<std::string, std::string, std::string>, Pool> pools;
  add_rows(by_model, "model", catalog, pools);
  add_rows(by_system, "system", catalog, pools);
  TrainingHeldoutTable t;
  t.basis = "published runs of " + by_model.rows_file +
            " priced with their published layouts by a fit without their model (held out: model) or without "
            "their system (held out: system); error = predicted / published tokens/s/GPU - 1";
  std::set<std::string> fitted;
  for (const RowPrediction& p : by_model.rows) fitted.insert(p.run.system);
  t.systems_fitted.assign(fitted.begin(), fitted.end());
  for (const auto& [key, pool] : pools) {
    TrainingHeldoutClass c;
    std::tie(c.generation, c.kind, c.held_out) = key;
    c.rows = static_cast<int>(pool.errors.size());
    c.models.assign(pool.models.begin(), pool.models.end());
    c.systems.assign(pool.systems.begin(), pool.systems.end());
    static_cast<ErrorSummary&>(c) = summarize_errors(pool.errors, 4);
    t.classes.push_back(std::move(c));
  }
  return t;
}

std::string training_heldout_to_json_text(const TrainingHeldoutTable& t) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["basis"] = t.basis;
  doc["systems_fitted"] = t.systems_fitted;
  doc["min_rows"] = t.min_rows;
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& c : t.classes) {
    nlohmann::ordered_json k = {{"generation", c.generation}, {"kind", c.kind},     {"held_out", c.held_out},
                                {"rows", c.rows},             {"models", c.models}, {"systems", c.systems}};
    write_error_summary(k, c);
    classes.push_back(std::move(k));
  }
  doc["classes"] = classes;
  return dump_json(doc, 1) + "\n";
}

TrainingHeldoutTable training_heldout_from_json_text(const std::string& text, const std::string& where) {
  const nlohmann::json doc = parse_json_text(text, where);
  if (!doc.is_object()) throw InputError(where, "", json_excerpt(doc), "a JSON object (a training held-out table)");
  JsonObjectReader r(doc, where);
  r.integer_in("schema_version", kSchemaVersion, kSchemaVersion);
  TrainingHeldoutTable t;
  t.basis = r.string("basis");
  t.systems_fitted = r.strings("systems_fitted");
  t.min_rows = static_cast<int>(r.integer_in("min_rows", 1, 1000000));
  const nlohmann::json& classes = r.array("classes");
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    JsonObjectReader c = array_element(classes, i, where, "/classes");
    TrainingHeldoutClass k;
    k.generation = c.string("generation");
    if (k.generation.empty()) c.fail("generation", "''", "a GPU generation (hopper, blackwell, ...)");
    k.kind = c.one_of("kind", {"dense", "moe"});
    k.held_out = c.one_of("held_out", {"model", "system"});
    k.rows = static_cast<int>(c.integer_in("rows", 1, 100000000));
    k.models = c.strings("models");
    k.systems = c.strings("systems");
    static_cast<ErrorSummary&>(k) = read_error_summary(c);
    c.finish();
    if (!seen.insert({k.generation, k.kind, k.held_out}).second)
      throw InputError(where, "/classes/" + std::to_string(i), "'" + k.generation + " " + k.kind + " " + k.held_out + "' again",
                       "each class (generation, kind, held_out) once");
    t.classes.push_back(std::move(k));
  }
  r.finish();
  return t;
}

const TrainingHeldoutTable* shipped_training_heldout() {
  static const std::unique_ptr<const TrainingHeldoutTable> table = []() -> std::unique_ptr<const TrainingHeldoutTable> {
    const std::string path = path_of_shipped();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
    return std::make_unique<const TrainingHeldoutTable>(training_heldout_from_json_text(read_json_file_text(path), path));
  }();
  return table.get();
}

std::optional<PlanHeldoutError> plan_heldout_error(const TrainingHeldoutTable& table, const std::string& generation,
                                                   bool moe, const std::string& system) {
  auto find = [&](const std::string& held_out) -> std::optional<TrainingHeldoutClass> {
    for (const auto& c : table.classes)
      if (c.generation == generation && c.kind == (moe ? "moe" : "dense") && c.held_out == held_out && c.rows >= table.min_rows)
        return c;
    return std::nullopt;
  };
  PlanHeldoutError e;
  e.new_model = find("model");
  const bool fitted = std::find(table.systems_fitted.begin(), table.systems_fitted.end(), system) != table.systems_fitted.end();
  if (!fitted) e.new_system = find("system");
  if (!e.new_model && !e.new_system) return std::nullopt;
  e.basis = table.basis + " (calibrate/training/heldout_errors.json)";
  return e;
}

}  // namespace racksim
