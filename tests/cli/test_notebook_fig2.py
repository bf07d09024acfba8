#!/usr/bin/python3
"""Executes notebooks/fig2_placement.ipynb headless (the seed's Fig 2 through `racksim place`); fails if
nbconvert fails (a cell raised, including the notebook's own asserts) or if the committed notebook
carries outputs."""
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
NOTEBOOK = os.path.join(SOURCE, "notebooks", "fig2_placement.ipynb")

with open(NOTEBOOK) as f:
    nb = json.load(f)
stale = [i for i, c in enumerate(nb["cells"]) if c.get("outputs") or c.get("execution_count")]
if stale:
    print(f"FAIL: committed notebook has outputs in cells {stale}; commit it without outputs")
    sys.exit(1)

env = dict(os.environ, MPLBACKEND="Agg")  # RACKSIM_BIN comes from ctest's environment
with tempfile.TemporaryDirectory() as tmp:
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute", NOTEBOOK, "--output-dir", tmp],
                         env=env, cwd=os.path.join(SOURCE, "notebooks"), capture_output=True, text=True, timeout=300 * TIMEOUT_SCALE)
    if run.returncode != 0:
        print(run.stdout[-4000:])
        print(run.stderr[-4000:])
        print(f"FAIL: nbconvert exited {run.returncode}")
        sys.exit(1)
print("ok: notebooks/fig2_placement.ipynb executed")
