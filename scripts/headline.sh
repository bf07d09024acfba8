#!/usr/bin/env bash
# The headline job of `make run` (argument: the build directory): a 1 GiB all-reduce on GB200 NVL72 at
# 1, 2 and 8 racks, flat ring vs NVLS vs hierarchical (NVLS or ring inside each rack, ring across), on
# the SimGrid engine, at vendor peaks (--calibration none, the course's inputs) and with the shipped
# calibration. Prints the tables and writes out/headline.json. Cases run two at a time (~1 min on 2 cores,
# most of it the 576-GPU flat ring: 662 k transfers).
set -euo pipefail
build=${1:-build}
racksim="$build/cli/racksim"
system=gb200-nvl72
mkdir -p out
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cases=()
for calibration in none default; do
  for racks in 8 2 1; do  # longest first
    cases+=("$calibration $racks ring ring" "$calibration $racks nvls nvls"
            "$calibration $racks hier-nvls hierarchical --inner nvls" "$calibration $racks hier-ring hierarchical --inner ring")
  done
done

# One case: calibration, racks, name, then --algo and its options. Writes <tmp>/<cal>-<racks>-<name>.json,
# or .err when racksim refuses (NVLS cannot span NVLink domains).
run_case() {
  local calibration=$1 racks=$2 name=$3 algo=$4
  shift 4
  local out="$tmp/$calibration-$racks-$name"
  if "$racksim" collective --system "$system" --racks "$racks" --op all_reduce --gpus $((72 * racks)) --bytes 1G \
      --calibration "$calibration" --algo "$algo" "$@" > "$out.json" 2> "$out.err"; then
    rm -f "$out.err"
  else
    rm -f "$out.json"
  fi
}
export -f run_case
export racksim system tmp

start=$(date +%s)
printf '%s\n' "${cases[@]}" | xargs -P 2 -L 1 bash -c 'run_case "$@"' _

/usr/bin/python3 - "$tmp" "$system" "$(($(date +%s) - start))" <<'EOF'
import json, os, sys
tmp, system, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
columns = [("ring", "flat ring"), ("nvls", "NVLS"), ("hier-nvls", "hier. NVLS+ring"), ("hier-ring", "hier. ring+ring")]
rows = []
for calibration in ("none", "default"):
    for racks in (1, 2, 8):
        for key, label in columns:
            base = os.path.join(tmp, f"{calibration}-{racks}-{key}")
            row = {"system": system, "calibration": calibration, "racks": racks, "gpus": 72 * racks, "case": key,
                   "label": label}
            if os.path.exists(base + ".json"):
                r = json.load(open(base + ".json"))
                row.update(available=True, algo=r["algo"], algo_note=r["algo_note"], time_us=r["time_us"],
                           algbw_GBps=r["algbw_GBps"], busbw_GBps=r["busbw_GBps"], phases=r["phases"],
                           links=r["links"])
            else:
                row.update(available=False, reason=open(base + ".err").read().strip())
            rows.append(row)
doc = {"what": "1 GiB all-reduce (nccl-tests size) on GB200 NVL72 racks, SimGrid engine", "op": "all_reduce",
       "bytes": 1 << 30, "results": rows}
with open("out/headline.json", "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
for calibration, title in (("none", "vendor peaks (--calibration none)"), ("default", "shipped calibration")):
    print(f"{system}: 1 GiB all-reduce, {title}: time us (busbw GB/s)")
    print(f"{'racks':>5} {'GPUs':>5} " + "".join(f"{label:>21}" for _, label in columns))
    for racks in (1, 2, 8):
        cells = []
        for key, _ in columns:
            row = next(r for r in rows if r["calibration"] == calibration and r["racks"] == racks and r["case"] == key)
            cells.append(f"{row['time_us']:>9.0f} ({row['busbw_GBps']:>6.1f})" if row["available"] else "n/a")
        print(f"{racks:>5} {72 * racks:>5} " + "".join(f"{c:>21}" for c in cells))
    print()
print("NVLS reduces inside one NVLink domain (one rack): n/a across racks, where NVLS+ring is NCCL's NVLS-tree.")
print("The flat ring is one ring through every GPU, so two (2 racks) or eight (8 racks) of its hops cross a 50 GB/s NIC.")
print(f"wrote out/headline.json ({seconds} s)")
EOF
