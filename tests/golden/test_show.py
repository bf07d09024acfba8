#!/usr/bin/python3
"""Golden test: `racksim show SYSTEM --format json` for every file in topologies/ (and gb200-nvl72 at 8 racks)
against tests/golden/show/<case>.json. Keys must be equal; numbers equal within a relative 1e-6; strings and
booleans exact. A system without a golden file fails, and so does a golden file without a system.

Regenerate after a deliberate change (then check every changed number by hand against the spec sheets):
    RACKSIM_UPDATE_GOLDEN=1 RACKSIM_BIN=build/cli/racksim RACKSIM_SOURCE_DIR=. /usr/bin/python3 tests/golden/test_show.py
"""
import json
import math
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
GOLDEN_DIR = os.path.join(SOURCE, "tests", "golden", "show")
REL_TOL = 1e-6


def cases():
    """(golden name, racksim show arguments) for every shipped system, plus multi-rack instances."""
    ids = sorted(f[:-5] for f in os.listdir(os.path.join(SOURCE, "topologies")) if f.endswith(".json"))
    out = [(i, [i]) for i in ids]
    out.append(("gb200-nvl72-racks8", ["gb200-nvl72", "--racks", "8"]))
    return out


def compare(expected, actual, where, errors):
    if isinstance(expected, bool) or isinstance(actual, bool) or isinstance(expected, str):
        if expected != actual or type(expected) is not type(actual):
            errors.append(f"{where}: expected {expected!r}, got {actual!r}")
    elif isinstance(expected, (int, float)):
        if not isinstance(actual, (int, float)) or not math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=0.0):
            errors.append(f"{where}: expected {expected!r}, got {actual!r} (relative tolerance {REL_TOL})")
    elif isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            got = sorted(actual) if isinstance(actual, dict) else type(actual).__name__
            errors.append(f"{where}: keys differ: expected {sorted(expected)}, got {got}")
            return
        for k in expected:
            compare(expected[k], actual[k], f"{where}/{k}", errors)
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            errors.append(f"{where}: expected a list of {len(expected)}, got {actual!r}")
            return
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare(e, a, f"{where}/{i}", errors)
    elif expected != actual:
        errors.append(f"{where}: expected {expected!r}, got {actual!r}")


def main():
    update = os.environ.get("RACKSIM_UPDATE_GOLDEN") == "1"
    errors = []
    names = set()
    for name, args in cases():
        names.add(name)
        run = subprocess.run([BIN, "show", *args, "--format", "json"], capture_output=True, text=True)
        if run.returncode != 0:
            errors.append(f"{name}: racksim show {' '.join(args)} exited {run.returncode}: {run.stderr.strip()}")
            continue
        actual = json.loads(run.stdout)
        path = os.path.join(GOLDEN_DIR, name + ".json")
        if update:
            with open(path, "w") as f:
                json.dump(actual, f, indent=2, sort_keys=True)
                f.write("\n")
            continue
        if not os.path.exists(path):
            errors.append(f"{name}: no golden file {os.path.relpath(path, SOURCE)}")
            continue
        with open(path) as f:
            compare(json.load(f), actual, name, errors)
    for f in sorted(os.listdir(GOLDEN_DIR)):
        if f.endswith(".json") and f[:-5] not in names:
            errors.append(f"{f}: golden file without a system in topologies/")
    for e in errors:
        print("FAIL", e)
    print(f"{len(names)} cases, {len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
