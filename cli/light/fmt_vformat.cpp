// fmt's out-of-line functions the CLI calls (fmt::vformat, behind fmt::format; detail::is_printable, behind
// the escaped form of a string), compiled into the
// `racksim` executable from fmt's own header-only implementation, so that `racksim` needs no libfmt.so.
// Debian ships fmt only as a shared library, and libfmt.so needs libstdc++.so: with it, linking the C++
// runtime statically (cli/CMakeLists.txt) would still load the shared one. Same fmt version, same code
// (fmt/format-inl.h), hence the same output.
#define FMT_HEADER_ONLY
#include <fmt/format.h>

// Taking its address with external linkage makes the compiler emit the inline definition (a weak symbol),
// which then resolves the calls from the library's objects.
extern std::string (*const racksim_cli_fmt_vformat)(fmt::string_view, fmt::format_args);
std::string (*const racksim_cli_fmt_vformat)(fmt::string_view, fmt::format_args) = &fmt::vformat;

// Writing a string escaped calls detail::is_printable out of line, and fmt/ranges.h (fmt::join, plan.cpp's
// message naming pinned degrees) instantiates that writer: without this definition the link took it from
// libfmt.so, and with it libstdc++.so was loaded again (found in session 44: `readelf -d racksim` listed
// libfmt.so.9; tests/cli/test_cli_links.py checks the NEEDED list).
extern bool (*const racksim_cli_fmt_is_printable)(std::uint32_t);
bool (*const racksim_cli_fmt_is_printable)(std::uint32_t) = &fmt::detail::is_printable;
