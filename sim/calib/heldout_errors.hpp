#pragma once
// How far the collective model is from measurements it was never fitted to, per class of collective.
//
// `racksim validate` refits the calibration without each racksim system in turn and predicts the left-out
// system's records (leave-one-system-out, models/calibration/collective_fit.cpp). Those predictions,
// summarised per class (GPU architecture, collective, inside one NVLink domain or across, size band), are
// calibrate/heldout_errors.json (models/calibration/heldout_table.cpp writes it; `validate` writes the same
// file into its --out-dir, and tests/validation/test_collective_cross_validation.py fails when the shipped
// copy is stale). A collective priced with the shipped calibration carries its class's figures
// (RunResult::heldout_error): what the model's error was, on systems it had not seen, for collectives like it.
#include <optional>
#include <string>
#include <vector>

#include "sim/core/statistics.hpp"

namespace racksim {

struct Calibration;
namespace wire {
class Writer;
class Reader;
}  // namespace wire

// The held-out error of one class: the ErrorSummary of its points (median, 90th percentile by nearest rank
// and worst |predicted / measured - 1|, and the median signed error: < 0, the model is faster than
// measured). Errors are on time (busbw's error is the opposite sign: -10 % in time is ~+11 % in bus bandwidth).
struct HeldoutError : ErrorSummary {
  std::string class_text;            // "blackwell all_reduce/nvls_tree, across NVLink domains, >= 64 MiB"
  std::string basis;                 // how the figures were made, and the file
  int points = 0;                    // held-out predictions in the class
  std::vector<std::string> systems;  // the racksim systems they are of
  int min_gpus = 0, max_gpus = 0;    // the GPU counts they span (a run outside them extrapolates)
  bool operator==(const HeldoutError&) const = default;
};

// Scopes and size bands of the classes.
inline constexpr const char* kHeldoutOneDomain = "one NVLink domain";
inline constexpr const char* kHeldoutAcrossDomains = "across NVLink domains";
std::string heldout_scope(bool spans_domains);
// "< 1 MiB" (latency-bound), "1-64 MiB", ">= 64 MiB" (bandwidth-bound; the bound is on these).
std::string heldout_size_band(double bytes);
const std::vector<std::string>& heldout_size_bands();

struct HeldoutClass {
  std::string arch;        // "hopper", "blackwell", or "*" (every architecture)
  std::string collective;  // "all_reduce/nvls_tree", "all_reduce/*" (every algorithm of the op), or "*"
  std::string scope;       // kHeldoutOneDomain or kHeldoutAcrossDomains
  std::string size;        // one of heldout_size_bands()
  HeldoutError error;      // class_text and basis are filled in by the reader
  bool operator==(const HeldoutClass&) const = default;
};

struct HeldoutTable {
  std::string basis;       // how the table was made
  int min_points = 10;     // a class answers only with at least this many points
  std::vector<HeldoutClass> classes;
  // The most specific class of a collective with at least min_points points: its architecture and
  // algorithm, then its architecture and op (any algorithm), then its op on any architecture, then any
  // collective; always with its scope and size band. nullopt when none has enough points.
  std::optional<HeldoutError> lookup(const std::string& arch, const std::string& op_slash_algo, bool spans_domains,
                                     double bytes) const;
  bool operator==(const HeldoutTable&) const = default;
};

// The file's text and back (schema_version 1; unknown keys, bad values and duplicate classes are errors).
HeldoutTable heldout_table_from_json_text(const std::string& text, const std::string& where);
// The same, by way of the parsed-file cache (sim/core/parsed_file_cache.hpp): what a previous process parsed
// for exactly this text with this build, else a parse that is then kept.
HeldoutTable heldout_table_from_json_text_cached(const std::string& text, const std::string& where);
// One error's binary form (sim/core/wire.hpp), the same in an engine's answer (sim/engine/result_wire.cpp) and in
// the parsed-file cache's table; decode throws SimulationError on bytes cut short.
void encode_heldout_error(wire::Writer& w, const HeldoutError& e);
HeldoutError decode_heldout_error(wire::Reader& r);
// The cache's encoding of a whole table; decode throws SimulationError on bytes that are not one table.
std::string encode_heldout_table(const HeldoutTable& table);
HeldoutTable decode_heldout_table(const std::string& bytes);
std::string heldout_table_to_json_text(const HeldoutTable& table);

// calibrate/heldout_errors.json, parsed once per text of the file a process meets; nullptr when the file is
// not there.
const HeldoutTable* shipped_heldout_table();

// Parses the shipped calibration and held-out table now, so that processes forked afterwards (an engine
// daemon's runs) find them parsed; what a file's text gave is reused only for that same text.
void warm_shipped_tables();

// Whether `calibration` is the shipped calibrate/default.json, field for field (not by name: a fit of one's own
// may be named "default" too).
bool is_shipped_calibration(const Calibration& calibration);

// The held-out error of a collective priced with `calibration`: the shipped table's class when the
// calibration is the shipped one, else nullopt (a user's calibration has no held-out figures).
std::optional<HeldoutError> heldout_error_for(const Calibration& calibration, const std::string& arch,
                                              const std::string& op_slash_algo, bool spans_domains, double bytes);

}  // namespace racksim
