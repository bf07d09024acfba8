#!/usr/bin/python3
"""docs/failures.md cannot go stale: every `$ racksim ...` line of its console blocks is run from the source
directory and its output must equal the lines shown under it, byte for byte (the outputs are deterministic)."""
import os
import re
import shlex
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
failures = []

with open(os.path.join(SOURCE, "docs", "failures.md")) as f:
    text = f.read()
blocks = re.findall(r"```console\n(.*?)```", text, re.S)
examples = []
for block in blocks:
    for chunk in re.split(r"^(?=\$ )", block, flags=re.M):
        if chunk.startswith("$ "):
            command, _, output = chunk.partition("\n")
            examples.append((command[2:], output))
if len(examples) < 5:
    failures.append(f"only {len(examples)} console examples found")
for command, expected in examples:
    args = shlex.split(command)
    assert args[0] == "racksim", command
    run = subprocess.run([BIN, *args[1:]], cwd=SOURCE, capture_output=True, text=True, timeout=300)
    ok = run.returncode == 0 and run.stdout == expected
    print(("ok   " if ok else "FAIL ") + command)
    if not ok:
        failures.append(command)
        print("---- shown\n" + expected + "---- printed today\n" + run.stdout + run.stderr)
sys.exit(1 if failures else 0)
