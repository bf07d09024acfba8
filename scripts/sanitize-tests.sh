#!/usr/bin/env bash
# make sanitize, after the build: the whole test suite of the ASan + UBSan build (argument: its build
# directory, parallel jobs). The Python tests load the instrumented _racksim module into Debian's
# uninstrumented python3, so libasan is preloaded for every test (harmless for the instrumented programs,
# which link the same library). Leak checking is off: python3 and the engine's forked children end
# without freeing what lives until exit (the children _exit on purpose: engine_process.hpp); every other
# ASan and UBSan report ends its test with a failure.
set -euo pipefail
build=$(cd "${1:-build-sanitize}" && pwd)
jobs=${2:-2}
asan=$(g++ -print-file-name=libasan.so)
export LD_PRELOAD="$asan"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -j "$jobs" --timeout 2400
