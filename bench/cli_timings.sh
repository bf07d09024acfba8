#!/usr/bin/env bash
# Issue 14's table as whole `racksim` calls: each row's command run N times (wall clock of the whole
# process: start, load, build, simulate, print, exit), the median beside the issue's goal. Each row's first
# call is timed apart and not in the median: it finds the engine daemon holding the previous row's platform
# (or no daemon) and pays for preparing its own, which a user's repeated calls do not (the "first" column). It measures;
# it never fails on time (a command that fails stops it; one refused as over a limit, exit 2, is a row). bench/bench_issue14.cpp has the same rows
# inside one process, with CPU times.
#
#   bench/cli_timings.sh [-n RUNS] [--slow] [--racksim PATH]
#     -n RUNS     runs per row (default 5; the median is reported)
#     --slow      also the slow rows: the DeepSeek-V3 plan (about a second; RUNS times, as the others) and
#                 100 008 GPUs with a tree across 1 389 racks (issue 14's goal of a minute; once, whatever -n says)
#     --racksim   the binary (default build/cli/racksim)
# State the load you measured under: the load average is printed with the table, and this machine's floor
# (a bare /bin/true and `racksim systems`, median of 15) above it.
set -uo pipefail
runs=5
slow=0
racksim=build/cli/racksim
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    --slow) slow=1; shift ;;
    --racksim) racksim="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "cli_timings.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then echo "cli_timings.sh: -n takes a whole number >= 1, not '$runs'" >&2; exit 2; fi
if [ ! -x "$racksim" ]; then echo "cli_timings.sh: no racksim binary at $racksim (build first, or --racksim PATH)" >&2; exit 2; fi

ar=(--op all_reduce --bytes 1G --format json --model engine)  # the engine: its refusal is a row, not the closed form
# name | goal | slow (0: always, RUNS times; 1: only with --slow, once; 2: only with --slow, RUNS times) | arguments
rows=(
  "8 GPUs HGX H100, ring|5 ms|0|collective --system hgx-h100 --gpus 8 --algo ring ${ar[*]}"
  "72 GPUs, ring|14 ms|0|collective --system gb200-nvl72 --gpus 72 --algo ring ${ar[*]}"
  "25-size sweep, 72 GPUs, ring (1 KiB - 16 GiB)|220 ms|0|sweep --system gb200-nvl72 --op all_reduce --gpus 72 --algo ring -b 1K -e 16G --format json"
  "flat ring across 8 racks (576 GPUs)|700 ms|0|collective --system gb200-nvl72 --racks 8 --gpus 576 --algo ring ${ar[*]}"
  "576 GPUs hierarchical (8 racks)|500 ms|0|collective --system gb200-nvl72 --racks 8 --gpus 576 --algo hierarchical ${ar[*]}"
  "1 440 GPUs hierarchical (20 racks)|500 ms|0|collective --system gb200-nvl72 --racks 20 --gpus 1440 --algo hierarchical ${ar[*]}"
  "4 608 GPUs hierarchical (64 racks)|2000 ms|0|collective --system gb200-nvl72 --racks 64 --gpus 4608 --algo hierarchical ${ar[*]}"
  "100 008 GPUs hierarchical, tree across (1 389 racks)|60000 ms|1|collective --system gb200-nvl72 --racks 1389 --gpus 100008 --algo hierarchical --outer tree ${ar[*]}"
  "plan DeepSeek-V3 on 8 racks|1000 ms|2|plan --system gb200-nvl72 --racks 8 --model deepseek-v3 --global-batch 4096 --seq-len 4096 --format json"
)

# The clock is bash's own (EPOCHREALTIME, microseconds): forking `date` before and after each call added
# ~1-3 ms of the script's own to every row (session 13).
printf '%s, %s runs per row, load average %s\n' "$racksim" "$runs" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
# This machine's floor, measured the same way: what starting any process costs here (a bare /bin/true) and the
# smallest racksim call (`systems`: no topology, no engine). On paravirtualised VMs page faults make both several
# times what they are on bare metal, which bounds the small rows (docs/performance.md).
floor_ms() {
  local samples=() i t0 t1 sorted
  for ((i = 0; i < 15; i++)); do
    t0=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>&1
    t1=${EPOCHREALTIME/./}
    samples+=($((10#$t1 - 10#$t0)))
  done
  sorted=($(printf '%s\n' "${samples[@]}" | sort -n))
  awk -v us="${sorted[7]}" 'BEGIN { printf "%.1f ms", us / 1e3 }'
}
printf 'floor (median of 15): /bin/true %s, racksim systems %s\n' "$(floor_ms /bin/true)" "$(floor_ms "$racksim" systems)"
printf '| %-46s | %12s | %12s | %12s | %10s | %-16s |\n' "workload (1 GiB all-reduce)" "median" "min" "first" "goal" "meets goal"
printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..48})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..14})" \
  "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..12})" "------------------"
for row in "${rows[@]}"; do
  IFS='|' read -r name goal is_slow args <<<"$row"
  if [ "$is_slow" != 0 ] && [ "$slow" = 0 ]; then
    printf '| %-46s | %12s | %12s | %12s | %10s | %-16s |\n' "$name" "skipped" "" "" "$goal" "(--slow runs it)"
    continue
  fi
  n=$runs
  [ "$is_slow" = 1 ] && n=1
  times=()
  refused=""
  first_us=""
  # A row run once (100 008 GPUs) has its one call as its first; the others one call more, the first, apart.
  start=-1
  [ "$is_slow" = 1 ] && start=0
  for ((i = start; i < n; i++)); do
    t0=${EPOCHREALTIME/./}
    # shellcheck disable=SC2086  # the arguments are words
    "$racksim" $args >/dev/null 2>/tmp/cli_timings.$$.err
    status=$?
    t1=${EPOCHREALTIME/./}
    if [ "$status" = 2 ]; then  # refused as input (over a limit): a row of the table, not a broken run
      refused=$(head -c 300 /tmp/cli_timings.$$.err)
      break
    elif [ "$status" != 0 ]; then
      echo "cli_timings.sh: '$racksim $args' failed (exit $status): $(head -c 300 /tmp/cli_timings.$$.err)" >&2
      rm -f /tmp/cli_timings.$$.err
      exit 1
    fi
    [ -z "$first_us" ] && first_us=$((10#$t1 - 10#$t0))
    [ "$i" -ge 0 ] && times+=($((10#$t1 - 10#$t0)))  # microseconds
  done
  rm -f /tmp/cli_timings.$$.err
  if [ -n "$refused" ]; then
    printf '| %-46s | %12s | %12s | %12s | %10s | %-16s |\n' "$name" "refused" "" "" "$goal" "no"
    echo "  refused: $refused" >&2
    continue
  fi
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  median_us=${sorted[$((n / 2))]}
  if [ $((n % 2)) -eq 0 ]; then median_us=$(((sorted[n / 2 - 1] + sorted[n / 2]) / 2)); fi
  goal_us=$((${goal% ms} * 1000))
  verdict=no
  [ "$median_us" -le "$goal_us" ] && verdict=yes
  fmt_ms() { awk -v us="$1" 'BEGIN { if (us >= 1e6) printf "%.2f s", us / 1e6; else printf "%.1f ms", us / 1e3 }'; }
  printf '| %-46s | %12s | %12s | %12s | %10s | %-16s |\n' "$name" "$(fmt_ms "$median_us")" "$(fmt_ms "${sorted[0]}")" "$(fmt_ms "$first_us")" "$goal" "$verdict"
done
