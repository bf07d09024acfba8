#!/usr/bin/env bash
# make sanitize, after the build: the whole test suite of the ASan + UBSan build (argument: its build
# directory, parallel jobs). The build's ctest files carry what that build needs (tests/CMakeLists.txt):
# the Python tests get libasan and libstdc++ preloaded (Debian's uninstrumented python3 loads the
# instrumented _racksim module), the C++ unit tests nothing (they link ASan; their children must not
# inherit it), and every time limit is 4x (the sanitized planner and engine run about 9x slower).
# Leak checking is off: python3 and the engine's forked children end without freeing what lives until
# exit (the children _exit on purpose: engine_process.hpp); every other ASan and UBSan report ends its
# test with a failure.
set -euo pipefail
build=$(cd "${1:-build-sanitize}" && pwd)
jobs=${2:-2}
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -j "$jobs"
