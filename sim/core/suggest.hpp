#pragma once
// "Did you mean": the valid name nearest to a misspelt one, for error messages (unknown JSON keys,
// calibration keys, algorithm names).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace racksim {

// Levenshtein distance (insertions, deletions, substitutions; a swap of neighbours counts 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The element of `valid` nearest to `wrong` when it is close enough to be a typo (at most a third of the
// longer name's length in edits, clamped to 1..4), else "". Ties: the first in `valid`.
std::string nearest_name(std::string_view wrong, const std::vector<std::string>& valid);

// " (did you mean 'x'?)" or "" when nothing is near.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& valid);

// "a, b, c": the names a message lists (what is allowed, what is known).
std::string comma_list(const std::vector<std::string>& names);

}  // namespace racksim
