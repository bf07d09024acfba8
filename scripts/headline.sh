#!/usr/bin/env bash
# The headline job of `make run`. Until the engine lands: the GB200 NVL72 summary.
set -euo pipefail
build=${1:-build}
mkdir -p out
"$build/cli/racksim" show gb200-nvl72
"$build/cli/racksim" show gb200-nvl72 --format json > out/headline.json
echo "wrote out/headline.json"
