#pragma once
// Parsed input files, kept between processes. Each CLI call is a new process, and nlohmann's JSON lexer costs
// ~70 instructions a byte: parsing calibrate/default.json (61 KB) was two thirds of an 8-GPU collective's
// caller, its topology file (8 KB) a third of what was left (callgrind). What a file's text parses to is kept,
// encoded by its reader (sim/core/wire.hpp), in this user's private runtime directory (private_dir.hpp), under
// the hash of the kind, the text and the build; the next process reading the same text decodes it instead.
//
// Never a different answer: an entry is given back only when it holds the whole text read now (compared byte
// for byte, not by hash) and was written by this very build (a rebuild may parse differently); its reader then
// decodes it completely or not at all (the calibration's, the topology's and the held-out table's readers:
// sim/calib/calibration_cache.hpp, sim/topo/topology_cache.hpp, sim/calib/heldout_errors.cpp). Anything else, an unreadable directory included, is parsed as before. Entries
// are written atomically (rename): concurrent processes read a whole entry or none. RACKSIM_PARSE_CACHE=off
// turns it off (nothing read, nothing written); entries unused for a week are removed when another is written.
#include <optional>
#include <string>

#include "sim/core/errors.hpp"

namespace racksim {

// The file an entry of `kind` ("calibration", "topology", "heldout-errors") for `text` goes to; "" when the cache
// is off or there is no private directory.
std::string parsed_cache_path(const std::string& kind, const std::string& text);
// The encoded value cached for exactly `text` by this build, if any.
std::optional<std::string> cached_parse(const std::string& kind, const std::string& text);
// Keeps `encoded` as what `text` parses to (best effort: silent when the directory cannot be written).
void cache_parse(const std::string& kind, const std::string& text, const std::string& encoded);

// A reader's two halves. The value cached for `text`, decoded by `decode` (which throws SimulationError on
// bytes that are not a whole value: then nothing, and the caller parses the text).
template <class Decode>
auto cached_value(const std::string& kind, const std::string& text, Decode decode)
    -> std::optional<decltype(decode(std::string()))> {
  const std::optional<std::string> bytes = cached_parse(kind, text);
  if (!bytes) return std::nullopt;
  try {
    return decode(*bytes);
  } catch (const SimulationError&) {
    return std::nullopt;
  }
}
// Caches what `encode()` gives as the parse of `text`; `encode` is not called when the cache is off.
template <class Encode>
void cache_value(const std::string& kind, const std::string& text, Encode encode) {
  if (!parsed_cache_path(kind, text).empty()) cache_parse(kind, text, encode());
}

}  // namespace racksim
