#!/usr/bin/python3
"""Executes notebooks/failures.ipynb headless through the Python bindings (PYTHONPATH=<build>/bindings:
<source>/bindings/python, the README's line); fails if a cell raises (including the notebook's own asserts:
the operator scenario's fates in both partition modes, the switch-tray loss per mode, the NIC-bound
partitioned all-reduce, goodput monotone in spare trays) or if the committed notebook carries outputs."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
BUILD = os.environ["RACKSIM_BUILD_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "failures.ipynb")

if not glob.glob(os.path.join(BUILD, "bindings", "_racksim*.so")):
    print(f"FAIL: the Python module is not built in {BUILD}/bindings (target _racksim)")
    sys.exit(1)
with open(NOTEBOOK) as f:
    nb = json.load(f)
stale = [i for i, c in enumerate(nb["cells"]) if c.get("outputs") or c.get("execution_count")]
if stale:
    print(f"FAIL: committed notebook has outputs in cells {stale}; commit it without outputs")
    sys.exit(1)
env = dict(os.environ, MPLBACKEND="Agg",
           PYTHONPATH=os.pathsep.join([os.path.join(BUILD, "bindings"), os.path.join(SOURCE, "bindings", "python")]))
start = time.monotonic()
with tempfile.TemporaryDirectory() as tmp:
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute", NOTEBOOK, "--output-dir", tmp,
                          f"--ExecutePreprocessor.timeout={300 * TIMEOUT_SCALE}"],
                         env=env, cwd=os.path.join(SOURCE, "notebooks"), capture_output=True, text=True, timeout=600 * TIMEOUT_SCALE)
    if run.returncode != 0:
        print(run.stdout[-4000:])
        print(run.stderr[-6000:])
        print(f"FAIL: nbconvert exited {run.returncode}")
        sys.exit(1)
print(f"ok: notebooks/failures.ipynb executed ({time.monotonic() - start:.0f} s)")
