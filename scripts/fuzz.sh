#!/usr/bin/env bash
# make fuzz: runs every libFuzzer harness of tests/fuzz for SECONDS each (arguments: the fuzz build
# directory, SECONDS; default 60; FUZZ_RUNS=N in the environment: N executions each instead), one after
# another on one core, starting from the committed corpus
# (tests/fuzz/corpus/<harness>/: the inputs that once crashed racksim, and what earlier runs kept) plus
# the shipped files of its format (inputs cut to 64 KiB: longer ones only slow the mutations down; the
# 100 000-deep crash inputs still exceed every limit in their first 64 KiB). Prints executions, coverage and the verdict per harness; a crash,
# a leak, a timeout (10 s per input) or an out-of-memory (2 GiB) stops that harness and fails the run,
# leaving the input in <build>/fuzz-runs/<harness>/crash-* (or leak-, timeout-, oom-).
set -uo pipefail
build=$(cd "${1:-build-fuzz}" && pwd)
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
runs="$build/fuzz-runs"
mkdir -p "$runs"

seeds() {  # shipped files of the harness's format
  case "$1" in
    fuzz_topology) ls "$src"/topologies/*.json "$src"/tests/unit/collectives/data/*.json ;;
    fuzz_calibration) echo "$src/calibrate/default.json" ;;
    fuzz_model) ls "$src"/models/workload/presets/*.json ;;
    fuzz_nccl_tests) ls "$src"/calibrate/nccl-tests-samples/*.txt ;;
    fuzz_schedule) ls "$src"/tests/fuzz/seeds/schedule/*.json 2>/dev/null ;;
    fuzz_placement) ls "$src"/tests/fuzz/seeds/placement/* 2>/dev/null ;;
    fuzz_jobs) ls "$src"/scenarios/*.json 2>/dev/null ;;
  esac
}

status=0
printf "%-18s %12s %10s %8s %s\n" harness executions exec/s cov verdict | tee "$runs/summary.txt"
for exe in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  work="$runs/$name"
  corpus="$work/corpus"
  mkdir -p "$corpus"
  [ -d "$src/tests/fuzz/corpus/$name" ] && cp -n "$src/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null
  for f in $(seeds "$name"); do cp -n "$f" "$corpus/seed-$(basename "$f")"; done
  limit="-max_total_time=$seconds"
  [ -n "${FUZZ_RUNS:-}" ] && limit="-runs=$FUZZ_RUNS"  # a number of executions instead of a time
  (cd "$work" && "$exe" "$corpus" "$limit" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$work/" > "$work/log.txt" 2>&1)
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/log.txt" | tail -1 | grep -o '[0-9]*')
  verdict=ok
  if [ $rc -ne 0 ]; then verdict="FAILED (exit $rc): $(ls "$work" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -1)"; status=1; fi
  printf "%-18s %12s %10s %8s %s\n" "$name" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$verdict" | tee -a "$runs/summary.txt"
done
echo "logs and corpora: $runs"
exit $status
