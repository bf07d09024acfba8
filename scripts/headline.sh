#!/usr/bin/env bash
# The headline job of `make run` (argument: the build directory): scripts/headline.py through the Python
# bindings. A 1 GiB all-reduce on GB200 NVL72 and GB300 NVL72 at 1, 2, 4 and 8 racks, flat ring vs NVLS vs
# hierarchical (NVLS or ring inside each rack, ring across), on the SimGrid engine at vendor peaks
# (calibration none, the course's inputs) and with the shipped calibration, next to the course's Fig 4
# model. Prints the tables (a superset of the earlier GB200-only table of this script), writes
# out/headline.json and out/fig4_allreduce.png. Simulations run two at a time; flat rings across racks
# run as their quotient (one ring position per orbit of the rings' symmetry: see headline.py).
set -euo pipefail
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
mkdir -p out
PYTHONPATH="$build/bindings:$src/bindings/python" MPLBACKEND=Agg /usr/bin/python3 "$src/scripts/headline.py" --out out
