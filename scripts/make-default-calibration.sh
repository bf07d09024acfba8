#!/bin/sh
# The one command that produces calibrate/default.json from committed data (racksim issue 5):
# fits link and algorithm parameters to the H200 probe run and the published measurements, and writes
# the fit report (calibrate/fit-report.md and .json) next to it; then the held-out error table that every
# result priced with it quotes (calibrate/heldout_errors.json: `racksim validate`'s leave-one-system-out
# errors per class of collective, about a minute and a half). Deterministic: the same inputs give a
# byte-identical file (tests/validation/test_default_calibration.py checks it).
#
#   scripts/make-default-calibration.sh [path/to/racksim]     (default: $RACKSIM_BIN, else build/cli/racksim)
#
# Multi-GPU runs (racksim issue 7) go in as --probes DIR=SYSTEM: the 2-GPU H200 run is in; a 4- or 8-GPU
# run would be added the same way, e.g. --probes calibrate/data/h200-nvswitch-8gpu-<date>=hgx-h200
# and, for nccl-tests logs, --nccl-tests FILE=SYSTEM/ALGORITHM.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-${RACKSIM_BIN:-build/cli/racksim}}
"$BIN" calibrate fit --name default \
  --published calibrate/data/published_measurements.json \
  --public calibrate/data/public_collectives.json \
  --probes calibrate/data/h200-pcie-1gpu-2026-11-29 \
  --probes calibrate/data/h200-nvswitch-2gpu-2026-11-29=hgx-h200 \
  --out calibrate/default.json \
  --report calibrate/fit-report.md
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BIN" validate --calibration default --out-dir "$out" > /dev/null
cp "$out/heldout_errors.json" calibrate/heldout_errors.json
