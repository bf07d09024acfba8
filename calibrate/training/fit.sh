#!/bin/sh
# The one command that rebuilds the planner's compute parameters (calibrate/training/compute-fit.json)
# from the published training runs in this directory and the Hopper kernel probes (H200s, an H100) in calibrate/data, and
# writes the report listing every run used and left out (fit-report.md). Deterministic: the same inputs
# give byte-identical files (tests/validation/test_training_throughput.py checks it). Re-run it whenever
# the collective model or its calibration changes: the fit prices every run's communication with it.
# Then it writes the held-out error table that every plan quotes (calibrate/training/heldout_errors.json:
# leave one model out and one system out, per GPU generation and dense or MoE), and rewrites
# docs/planner.md's generated tables (docs_tables.py); `docs_tables.py --readme` also
# re-runs the README's plan example, whose numbers move with the fit.
#
#   calibrate/training/fit.sh [path/to/racksim]     (default: $RACKSIM_BIN, else build/cli/racksim)
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-${RACKSIM_BIN:-build/cli/racksim}}
"$BIN" plan --fit calibrate/training/published_training_throughput.json \
  --fit-out calibrate/training/compute-fit.json \
  --fit-report calibrate/training/fit-report.md
"$BIN" plan --validate calibrate/training/published_training_throughput.json \
  --heldout-table calibrate/training/heldout_errors.json > /dev/null
python3 calibrate/training/docs_tables.py "$BIN"
