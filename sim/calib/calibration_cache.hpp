#pragma once
// The parsed-calibration cache. Parsing calibrate/default.json (61 KB of JSON with every entry's sources and
// fit) was two thirds of the instructions of a small CLI call: 7.1 M of 10.8 M for an 8-GPU collective
// (callgrind), because each call is a new process. A calibration file's text, once parsed, is kept in
// binary (its Calibration as sim/core/wire.hpp encodes it) in this user's private runtime directory
// (sim/core/private_dir.hpp), under the hash of the text and of the build; the next process reading the
// same text decodes it instead (~0.1 M instructions).
//
// Never a different answer: an entry is used only when it holds the whole text read now (compared byte for
// byte, not by hash), was written by this very build (a rebuild may parse differently), and decodes
// completely; anything else, including an unreadable directory, is parsed as before. Entries are written
// atomically (rename), so concurrent processes read a whole entry or none. RACKSIM_CALIBRATION_CACHE=off
// turns it off (nothing read, nothing written).
#include <optional>
#include <string>

#include "sim/calib/calibration.hpp"

namespace racksim {

// The binary form (exact: decode(encode(c)) == c, every field; tests/unit/calib/test_calibration_cache.cpp).
std::string encode_calibration(const Calibration& calibration);
// Throws SimulationError on bytes that are not a whole encoded calibration.
Calibration decode_calibration(const std::string& bytes);

// The cached parse of `text`, if this build cached it before.
std::optional<Calibration> cached_calibration(const std::string& text);
// Caches `calibration` as the parse of `text` (best effort: silent when the directory cannot be written).
void cache_calibration(const std::string& text, const Calibration& calibration);
// The file an entry for `text` goes to ("" without a private directory or with the cache off).
std::string calibration_cache_path(const std::string& text);

}  // namespace racksim
