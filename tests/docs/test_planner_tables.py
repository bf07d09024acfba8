#!/usr/bin/python3
"""docs/planner.md's generated tables (the fitted parameters, the leave-one-model-out errors per system, model and
precision, the worst runs and the held-out classes every plan quotes) are what calibrate/training/docs_tables.py
writes from the shipped fit and a fresh `racksim plan --validate`: a model or data change without the script's
rerun fails here, naming the first stale line; so does a README plan example laid out where `docs_tables.py --readme`
cannot rewrite it."""
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
SRC = os.environ["RACKSIM_SOURCE_DIR"]

run = subprocess.run([sys.executable, os.path.join(SRC, "calibrate", "training", "docs_tables.py"), "--check", BIN],
                     cwd=SRC, capture_output=True, text=True)
print(run.stdout + run.stderr, end="")
sys.exit(run.returncode)
