#!/usr/bin/python3
"""Executes notebooks/fig4_allreduce.ipynb and notebooks/gb200_vs_gb300.ipynb headless through the Python
bindings (PYTHONPATH=<build>/bindings:<source>/bindings/python, the README's line); fails if a cell raises
(including the notebooks' own asserts) or if a committed notebook carries outputs. The two run at once."""
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
NOTEBOOKS = ["fig4_allreduce.ipynb", "gb200_vs_gb300.ipynb"]

if not glob.glob(os.path.join(BUILD, "bindings", "_racksim*.so")):
    print(f"FAIL: the Python module is not built in {BUILD}/bindings (target _racksim, RACKSIM_BUILD_PYTHON=ON)")
    sys.exit(1)

failed = False
for name in NOTEBOOKS:
    with open(os.path.join(SOURCE, "notebooks", name)) as f:
        nb = json.load(f)
    stale = [i for i, c in enumerate(nb["cells"]) if c.get("outputs") or c.get("execution_count")]
    if stale:
        print(f"FAIL: {name}: committed with outputs in cells {stale}; strip them: "
              f"jupyter nbconvert --clear-output --inplace notebooks/{name}")
        failed = True

env = dict(os.environ, MPLBACKEND="Agg",
           PYTHONPATH=os.pathsep.join([os.path.join(BUILD, "bindings"), os.path.join(SOURCE, "bindings", "python")]))
with tempfile.TemporaryDirectory() as tmp:
    runs = {}
    for name in NOTEBOOKS:
        runs[name] = (time.monotonic(), subprocess.Popen(
            ["jupyter", "nbconvert", "--to", "notebook", "--execute", os.path.join(SOURCE, "notebooks", name),
             "--output-dir", tmp, f"--ExecutePreprocessor.timeout={300 * TIMEOUT_SCALE}"],
            env=env, cwd=os.path.join(SOURCE, "notebooks"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for name, (start, proc) in runs.items():
        out, err = proc.communicate(timeout=600 * TIMEOUT_SCALE)
        seconds = time.monotonic() - start
        if proc.returncode != 0:
            print(out[-4000:])
            print(err[-6000:])
            print(f"FAIL: {name}: nbconvert exited {proc.returncode} after {seconds:.0f} s")
            failed = True
        else:
            print(f"ok: notebooks/{name} executed ({seconds:.0f} s, two notebooks at once)")
sys.exit(1 if failed else 0)
