#pragma once
// Calibration files in the parsed-file cache (sim/core/parsed_file_cache.hpp): parsing calibrate/default.json
// (61 KB of JSON with every entry's sources and fit) was two thirds of the instructions of a small CLI call,
// 7.1 M of 10.8 M for an 8-GPU collective (callgrind), because each call is a new process. What a text parses
// to is kept in binary (the encoding below) and decoded by the next process of this build that reads the same
// text (~0.1 M instructions); the cache's rules (the whole text compared, this build only, all or nothing)
// are parsed_file_cache.hpp's.
#include <optional>
#include <string>

#include "sim/calib/calibration.hpp"

namespace racksim {

// The binary form (exact: decode(encode(c)) == c, every field; tests/unit/calib/test_calibration_cache.cpp).
std::string encode_calibration(const Calibration& calibration);
// Throws SimulationError on bytes that are not a whole encoded calibration (cut short, or trailing bytes).
Calibration decode_calibration(const std::string& bytes);

// The cached parse of `text`, if this build cached it before.
std::optional<Calibration> cached_calibration(const std::string& text);
// Caches `calibration` as the parse of `text` (best effort: silent when the directory cannot be written).
void cache_calibration(const std::string& text, const Calibration& calibration);
// The file an entry for `text` goes to ("" without a private directory or with the cache off).
std::string calibration_cache_path(const std::string& text);

}  // namespace racksim
