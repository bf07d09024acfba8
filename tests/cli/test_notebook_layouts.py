#!/usr/bin/python3
"""Executes notebooks/layouts.ipynb headless (the planner for capacity planners, through racksim.plan and
racksim.validate_training); fails if the committed notebook carries outputs, if nbconvert fails (a cell
raised, including the notebook's own asserts: published runs within the in-sample error, DeepSeek-V3's EP
inside the NVLink domain, self-check 6), or if the executed notebook lacks the self-check's 'ok' line."""
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
BUILD = os.environ["RACKSIM_BUILD_DIR"]
NOTEBOOK = os.path.join(SOURCE, "notebooks", "layouts.ipynb")
passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print("ok:", what)
    else:
        failed += 1
        print("FAIL:", what)


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


with open(NOTEBOOK) as f:
    nb = json.load(f)
stale = [i for i, c in enumerate(nb["cells"]) if c.get("outputs") or c.get("execution_count")]
check(not stale, f"committed notebook has no outputs (cells with outputs: {stale})")

bindings = os.path.join(BUILD, "bindings")
if not (os.path.isdir(bindings) and any(name.startswith("_racksim") for name in os.listdir(bindings))):
    check(False, f"the _racksim module is built in {bindings}")
    finish()

env = dict(os.environ, MPLBACKEND="Agg",
           PYTHONPATH=os.pathsep.join([bindings, os.path.join(SOURCE, "bindings", "python")]))
with tempfile.TemporaryDirectory() as tmp:
    run = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute", NOTEBOOK, "--output-dir", tmp],
                         env=env, cwd=os.path.join(SOURCE, "notebooks"), capture_output=True, text=True, timeout=600 * TIMEOUT_SCALE)
    if run.returncode != 0:
        print(run.stdout[-4000:])
        print(run.stderr[-4000:])
    check(run.returncode == 0, f"nbconvert --execute exited {run.returncode}")
    out = os.path.join(tmp, "layouts.ipynb")
    if os.path.exists(out):
        with open(out) as f:
            executed = json.load(f)
        texts = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", [])
                        if o.get("output_type") == "stream")
        errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
        check(not errors, "no cell raised")
        check("self-check 6: ok" in texts, "self-check 6 passed inside the notebook")
        figures = sum(1 for c in executed["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
        check(figures == 2, f"two figures drawn (predicted vs published, system comparison): {figures}")
finish()
