#pragma once
// Units: SI inside (bytes, seconds, bytes/s). Conversions for the units that appear in file keys and on
// the command line live here, so that no other file multiplies by 1e9 by hand.
#include <cstdint>
#include <string>
#include <string_view>

namespace racksim::units {

inline constexpr double kGB = 1e9;                 // decimal gigabyte (vendor bandwidth and capacity)
inline constexpr double kTB = 1e12;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kMicrosecond = 1e-6;

inline constexpr double GBps_to_Bps(double gbps) { return gbps * kGB; }
inline constexpr double Bps_to_GBps(double bps) { return bps / kGB; }
inline constexpr double us_to_s(double us) { return us * kMicrosecond; }
inline constexpr double s_to_us(double s) { return s / kMicrosecond; }

// Largest per-rank message racksim accepts (1 TiB): beyond this no GPU in any topology holds the buffer.
inline constexpr std::uint64_t kMaxBytesPerRank = 1ULL << 40;

// Parses a byte count the way nccl-tests and the CLI write them: "1G", "512M", "64K", "8", "1GiB",
// "100GB" (decimal when a trailing B follows a decimal prefix: "100GB" = 1e11, "1GiB" = 2^30;
// bare K/M/G/T are binary, as in nccl-tests). Throws InputError naming `where` on anything else.
std::uint64_t parse_bytes(std::string_view text, const std::string& where);

// "1 GiB", "512 MiB", "64 KiB", "8 B": exact binary units when they divide, else bytes.
std::string format_bytes(std::uint64_t bytes);

}  // namespace racksim::units
