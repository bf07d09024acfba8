#pragma once
// One hash combiner for racksim's hashed caches (boost::hash_combine's mixing): keys built from several
// integers (GPU lists, request tuples, layer-shape words) hash through it instead of a copy of it each.
#include <cstddef>
#include <cstdint>

namespace racksim {

inline std::size_t hash_combine(std::size_t h, std::uint64_t x) {
  return h ^ (static_cast<std::size_t>(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

}  // namespace racksim
