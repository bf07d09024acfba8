#pragma once
// Damaged binary encodings (sim/core/wire.hpp readers): `decode` must refuse every prefix of `bytes` checked
// (every `stride`-th length, and each of the last 64) with a SimulationError, and 2 000 single-byte changes
// (a fixed seed) must be refused or decode to a value whose encoding comes back unchanged through decode and
// encode again (compared as bytes: a damaged double may be a NaN, and a flag byte of 5 is written back as 1).
// Returns how many changed encodings decoded.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/core/errors.hpp"

namespace racksim::test {

template <class Encode, class Decode>
int expect_damage_refused_or_whole(const std::string& bytes, Encode encode, Decode decode, std::size_t stride) {
  for (std::size_t n = 0; n < bytes.size(); n += (n + 64 < bytes.size() ? stride : 1))
    EXPECT_THROW(decode(bytes.substr(0, n)), SimulationError) << n;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int decoded = 0;
  for (int k = 0; k < 2000; ++k) {
    std::string damaged = bytes;
    damaged[(next() >> 17) % damaged.size()] = static_cast<char>(next() >> 56);
    try {
      const std::string again = encode(decode(damaged));
      EXPECT_EQ(encode(decode(again)), again);
      ++decoded;
    } catch (const SimulationError&) {
    }
  }
  return decoded;
}

}  // namespace racksim::test
