#include "sim/core/units.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include "sim/core/errors.hpp"

namespace racksim::units {

std::uint64_t parse_bytes(std::string_view text, const std::string& where) {
  const std::string shown = "'" + std::string(text) + "'";
  const std::string allowed = "a positive byte count such as 8, 64K, 512M, 1G, 1GiB or 100GB";
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw InputError(where, "", shown, allowed);
  double number = 0;
  try {
    number = std::stod(std::string(text.substr(0, i)));
  } catch (const std::exception&) {
    throw InputError(where, "", shown, allowed);
  }
  std::string suffix(text.substr(i));
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (suffix.empty() || suffix == "B") scale = 1;
  else if (suffix == "K" || suffix == "KIB") scale = 1024.0;
  else if (suffix == "M" || suffix == "MIB") scale = 1024.0 * 1024.0;
  else if (suffix == "G" || suffix == "GIB") scale = kGiB;
  else if (suffix == "T" || suffix == "TIB") scale = kGiB * 1024.0;
  else if (suffix == "KB") scale = 1e3;
  else if (suffix == "MB") scale = 1e6;
  else if (suffix == "GB") scale = 1e9;
  else if (suffix == "TB") scale = 1e12;
  else throw InputError(where, "", shown, allowed);
  const double bytes = number * scale;
  // 2^64 itself is not representable: static_cast<double>(UINT64_MAX) rounds up to 2^64, so the test is >=
  // (16777216T = 2^64 bytes once wrapped to 0, read as "no swap").
  if (!std::isfinite(bytes) || bytes >= 18446744073709551616.0)
    throw InputError(where, "", shown, "a byte count below 2^64 (16 EiB), such as 8, 64K, 512M, 1G, 1GiB or 100GB");
  if (bytes != std::floor(bytes)) throw InputError(where, "", shown, "a whole number of bytes");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  std::uint64_t value = bytes;
  while (unit < 4 && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    ++unit;
  }
  return std::to_string(value) + " " + names[unit];
}

}  // namespace racksim::units
