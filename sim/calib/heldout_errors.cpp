#include "sim/calib/heldout_errors.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "sim/calib/calibration.hpp"
#include "sim/core/error_summary_json.hpp"
#include "sim/core/json_reader.hpp"
#include "sim/core/file_memo.hpp"
#include "sim/core/parsed_file_cache.hpp"
#include "sim/core/wire.hpp"

namespace racksim {

namespace {

constexpr long kHeldoutSchemaVersion = 1;
constexpr double kMiB = 1024.0 * 1024.0;
const char* const kShippedFile = "heldout_errors.json";

const std::vector<std::string>& scopes() {
  static const std::vector<std::string> s = {kHeldoutOneDomain, kHeldoutAcrossDomains};
  return s;
}

// "blackwell all_reduce/nvls_tree, across NVLink domains, >= 64 MiB"; the wider classes say what they pool.
std::string class_text_of(const HeldoutClass& c) {
  std::string what;
  if (c.collective == "*") {
    what = "any collective";
  } else if (c.collective.size() > 2 && c.collective.compare(c.collective.size() - 2, 2, "/*") == 0) {
    what = c.collective.substr(0, c.collective.size() - 2) + " (any algorithm)";
  } else {
    what = c.collective;
  }
  const std::string arch = c.arch == "*" ? "any architecture" : c.arch;
  return arch + " " + what + ", " + c.scope + ", " + c.size;
}

std::string op_of(const std::string& op_slash_algo) {
  const auto slash = op_slash_algo.find('/');
  return slash == std::string::npos ? op_slash_algo : op_slash_algo.substr(0, slash);
}

}  // namespace

std::string heldout_scope(bool spans_domains) { return spans_domains ? kHeldoutAcrossDomains : kHeldoutOneDomain; }

const std::vector<std::string>& heldout_size_bands() {
  static const std::vector<std::string> bands = {"< 1 MiB", "1-64 MiB", ">= 64 MiB"};
  return bands;
}

std::string heldout_size_band(double bytes) {
  const auto& b = heldout_size_bands();
  if (bytes < kMiB) return b[0];
  if (bytes < 64 * kMiB) return b[1];
  return b[2];
}

std::optional<HeldoutError> HeldoutTable::lookup(const std::string& arch, const std::string& op_slash_algo,
                                                 bool spans_domains, double bytes) const {
  const std::string scope = heldout_scope(spans_domains), size = heldout_size_band(bytes);
  const std::string op = op_of(op_slash_algo);
  const std::vector<std::pair<std::string, std::string>> levels = {
      {arch, op_slash_algo}, {arch, op + "/*"}, {"*", op + "/*"}, {"*", "*"}};
  for (const auto& [a, collective] : levels)
    for (const HeldoutClass& c : classes)
      if (c.arch == a && c.collective == collective && c.scope == scope && c.size == size &&
          c.error.points >= min_points)
        return c.error;
  return std::nullopt;
}

HeldoutTable heldout_table_from_json_text(const std::string& text, const std::string& where) {
  const nlohmann::json doc = parse_json_text(text, where);
  if (!doc.is_object()) throw InputError(where, "", json_excerpt(doc), "a JSON object (a held-out error table)");
  JsonObjectReader r(doc, where);
  r.integer_in("schema_version", kHeldoutSchemaVersion, kHeldoutSchemaVersion);
  HeldoutTable t;
  t.basis = r.string("basis");
  t.min_points = static_cast<int>(r.integer_in("min_points", 1, 1000000));
  const std::string file_note = " (calibrate/" + std::string(kShippedFile) + ")";
  const nlohmann::json& classes = r.array("classes");
  std::set<std::tuple<std::string, std::string, std::string, std::string>> seen;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    JsonObjectReader c = array_element(classes, i, where, "/classes");
    HeldoutClass k;
    k.arch = c.one_of("arch", [] {
      std::vector<std::string> a = architecture_names();
      a.push_back("*");
      return a;
    }());
    k.collective = c.string("collective");
    if (k.collective.empty()) c.fail("collective", "''", "an op/algorithm key, op/* or *");
    k.scope = c.one_of("scope", scopes());
    k.size = c.one_of("size", heldout_size_bands());
    HeldoutError& e = k.error;
    e.points = static_cast<int>(c.integer_in("points", 1, 100000000));
    e.systems = c.strings("systems");
    const nlohmann::json& gpus = c.array("gpus");
    if (gpus.size() != 2 || !gpus[0].is_number_integer() || !gpus[1].is_number_integer() || gpus[0].get<long>() < 1 ||
        gpus[1].get<long>() < gpus[0].get<long>() || gpus[1].get<long>() > 100000000)
      throw InputError(where, c.pointer_of("gpus"), json_excerpt(gpus), "[fewest, most] GPUs, 1 <= fewest <= most");
    e.min_gpus = gpus[0].get<int>();
    e.max_gpus = gpus[1].get<int>();
    static_cast<ErrorSummary&>(e) = read_error_summary(c);
    c.finish();
    if (!seen.insert({k.arch, k.collective, k.scope, k.size}).second)
      throw InputError(where, "/classes/" + std::to_string(i), "'" + class_text_of(k) + "' again",
                       "each class (arch, collective, scope, size) once");
    e.class_text = class_text_of(k);
    e.basis = t.basis + file_note;
    t.classes.push_back(std::move(k));
  }
  r.finish();
  return t;
}

std::string heldout_table_to_json_text(const HeldoutTable& t) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kHeldoutSchemaVersion;
  doc["basis"] = t.basis;
  doc["min_points"] = t.min_points;
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const HeldoutClass& c : t.classes) {
    const HeldoutError& e = c.error;
    nlohmann::ordered_json k = {{"arch", c.arch},     {"collective", c.collective}, {"scope", c.scope},
                                {"size", c.size},     {"points", e.points},         {"systems", e.systems},
                                {"gpus", {e.min_gpus, e.max_gpus}}};
    write_error_summary(k, e);
    classes.push_back(std::move(k));
  }
  doc["classes"] = classes;
  return dump_json(doc, 1) + "\n";
}

namespace {

// The table as the parsed-file cache keeps it between processes (sim/core/parsed_file_cache.hpp): a process that
// prices with the closed form quotes the table once, and nlohmann's parse of its ~44 KB was a third of an analytic
// 8-GPU call's CPU. The sizes at the time this encoder was written: a field added fails the build here until
// encode and decode carry it too (a field left out would come back as its default).
static_assert(sizeof(ErrorSummary) == 32, "ErrorSummary changed: update encode_heldout_error/decode_heldout_error");
static_assert(sizeof(HeldoutError) == 136, "HeldoutError changed: update encode_heldout_error/decode_heldout_error");
static_assert(sizeof(HeldoutClass) == 264, "HeldoutClass changed: update encode_heldout_table/decode_heldout_table");
static_assert(sizeof(HeldoutTable) == 64, "HeldoutTable changed: update encode_heldout_table/decode_heldout_table");

constexpr const char* kCacheKind = "heldout-errors";

}  // namespace

void encode_heldout_error(wire::Writer& w, const HeldoutError& h) {
  w.str(h.class_text);
  w.str(h.basis);
  w.pod(h.points);
  w.strs(h.systems);
  w.pod(h.min_gpus);
  w.pod(h.max_gpus);
  w.pod(h.median_abs);
  w.pod(h.p90_abs);
  w.pod(h.worst_abs);
  w.pod(h.median_signed);
}

HeldoutError decode_heldout_error(wire::Reader& r) {
  HeldoutError h;
  h.class_text = r.str();
  h.basis = r.str();
  h.points = r.pod<int>();
  h.systems = r.strs();
  h.min_gpus = r.pod<int>();
  h.max_gpus = r.pod<int>();
  h.median_abs = r.pod<double>();
  h.p90_abs = r.pod<double>();
  h.worst_abs = r.pod<double>();
  h.median_signed = r.pod<double>();
  return h;
}

std::string encode_heldout_table(const HeldoutTable& t) {
  wire::Writer w;
  w.str(t.basis);
  w.pod(t.min_points);
  w.pod<std::uint64_t>(t.classes.size());
  for (const HeldoutClass& k : t.classes) {
    w.str(k.arch);
    w.str(k.collective);
    w.str(k.scope);
    w.str(k.size);
    encode_heldout_error(w, k.error);
  }
  return w.take();
}

HeldoutTable decode_heldout_table(const std::string& bytes) {
  wire::Reader r(bytes, "cached held-out error table");
  HeldoutTable t;
  t.basis = r.str();
  t.min_points = r.pod<int>();
  for (std::uint64_t i = 0, n = r.count(); i < n; ++i) {
    HeldoutClass k;
    k.arch = r.str();
    k.collective = r.str();
    k.scope = r.str();
    k.size = r.str();
    k.error = decode_heldout_error(r);
    t.classes.push_back(std::move(k));
  }
  if (!r.done()) throw SimulationError("internal: trailing bytes in a cached held-out error table");
  return t;
}

HeldoutTable heldout_table_from_json_text_cached(const std::string& text, const std::string& where) {
  if (std::optional<HeldoutTable> cached = cached_value(kCacheKind, text, decode_heldout_table)) return std::move(*cached);
  HeldoutTable t = heldout_table_from_json_text(text, where);
  cache_value(kCacheKind, text, [&] { return encode_heldout_table(t); });
  return t;
}

const HeldoutTable* shipped_heldout_table() {
  // By the file's text: parsed once per text a process meets (an engine daemon's children inherit the
  // daemon's, warm_shipped_tables), and never stale while a long-lived daemon outlives a regenerated file.
  // Tables are never freed, so a pointer handed out stays valid. The text is read again only when the file's
  // identity changed (FileMemo): every engine run quotes the table, and reading and comparing its text was
  // ~35 us of an 8-GPU run's ~2 ms in the daemon's child (session 54).
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const HeldoutTable>> by_text;
  static FileMemo<const HeldoutTable*> memo;
  const std::string path = std::string(RACKSIM_CALIBRATION_DIR) + "/" + kShippedFile;
  return memo.get(path, [&]() -> const HeldoutTable* {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
    std::string text = read_json_file_text(path);
    std::lock_guard<std::mutex> lock(mutex);
    auto it = by_text.find(text);
    if (it == by_text.end()) {
      auto table = std::make_unique<const HeldoutTable>(heldout_table_from_json_text_cached(text, path));
      it = by_text.emplace(std::move(text), std::move(table)).first;
    }
    return it->second.get();
  });
}

bool is_shipped_calibration(const Calibration& calibration) {
  if (calibration.name != "default") return false;  // cheap first: the shipped file's name
  // The shipped calibration as last read, kept while the file's identity is the same (FileMemo):
  // load_calibration reads the file and returns a copy of what it parsed, ~140 us of the ~190 us quoting the
  // held-out errors took in every engine run (session 54); now a stat and the comparison.
  static FileMemo<std::shared_ptr<const Calibration>> memo;
  const std::shared_ptr<const Calibration> shipped =
      memo.get(std::string(RACKSIM_CALIBRATION_DIR) + "/default.json",
               [] { return std::make_shared<const Calibration>(load_calibration("default")); });
  return calibration == *shipped;
}

void warm_shipped_tables() {
  try {
    (void)is_shipped_calibration(load_calibration("default"));  // its memo too, for the daemon's children
    (void)shipped_heldout_table();
  } catch (const std::exception&) {
    // A missing or broken shipped file is reported where a result needs it, not here.
  }
}

std::optional<HeldoutError> heldout_error_for(const Calibration& calibration, const std::string& arch,
                                              const std::string& op_slash_algo, bool spans_domains, double bytes) {
  if (arch.empty() || !is_shipped_calibration(calibration)) return std::nullopt;
  const HeldoutTable* table = shipped_heldout_table();
  if (table == nullptr) return std::nullopt;
  return table->lookup(arch, op_slash_algo, spans_domains, bytes);
}

}  // namespace racksim
