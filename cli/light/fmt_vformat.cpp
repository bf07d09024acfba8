// fmt's one out-of-line function the CLI calls (fmt::vformat, behind fmt::format), compiled into the
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
