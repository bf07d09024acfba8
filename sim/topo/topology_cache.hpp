#pragma once
// Topology files in the parsed-file cache (sim/core/parsed_file_cache.hpp): after the calibration, parsing and
// checking the system's topology file (8 KB) was a third of what was left of an 8-GPU collective's caller
// (1.5 M of 4.3 M instructions, callgrind). What a text parses to is kept in binary (the encoding below) and
// decoded by the next process of this build that reads the same text.
#include <optional>
#include <string>

#include "sim/topo/topology_spec.hpp"

namespace racksim {

// The binary form (exact: decode(encode(s)) == s, every field; tests/unit/topo/test_topology_cache.cpp).
std::string encode_topology(const TopologySpec& spec);
// Throws SimulationError on bytes that are not a whole encoded topology (cut short, or trailing bytes).
TopologySpec decode_topology(const std::string& bytes);

// The cached parse of `text`, if this build cached it before.
std::optional<TopologySpec> cached_topology(const std::string& text);
// Caches `spec` as the parse of `text` (best effort).
void cache_topology(const std::string& text, const TopologySpec& spec);
// The file an entry for `text` goes to ("" without a private directory or with the cache off).
std::string topology_cache_path(const std::string& text);

}  // namespace racksim
