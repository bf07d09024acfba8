#pragma once
// libFuzzer harnesses of racksim's loaders (tests/fuzz/README.md). Each feeds arbitrary bytes to one
// loader: an InputError is the right answer to bad input and is swallowed; any other exception escapes
// (libFuzzer reports it as a crash, as it does a sanitizer finding, a hang or an out-of-memory).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/core/errors.hpp"

namespace racksim::fuzz {
// Defined by each harness: one input, the loader under test.
void one_input(const std::string& text);

// The one-line rule, checked on every message a fuzzer provokes: no newline, bounded length.
inline void check_message(const char* what) {
  const std::string m(what);
  if (m.find('\n') != std::string::npos || m.size() > kMaxMessageBytes + 200) __builtin_trap();
}
}  // namespace racksim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    racksim::fuzz::one_input(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const racksim::InputError& e) {
    racksim::fuzz::check_message(e.what());
  }
  return 0;
}
