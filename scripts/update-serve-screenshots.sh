#!/usr/bin/env bash
# Copies the screenshots that the browser test (tests/cli/test_serve_browser.py, run by `make test`) wrote to
# out/ into docs/img/, where the README shows them. Run it from the repository root after `make test`, then
# commit docs/img/serve_fig*.png: the README's pictures are then exactly what the test saw.
set -euo pipefail
cd "$(dirname "$0")/.."
for n in 4 2 3; do
  if [ ! -f "out/serve_fig$n.png" ]; then
    echo "out/serve_fig$n.png is missing: run make test (or ctest -R test_serve_browser) first" >&2
    exit 1
  fi
  cp "out/serve_fig$n.png" "docs/img/serve_fig$n.png"
done
echo "copied out/serve_fig{4,2,3}.png to docs/img/"
