#!/usr/bin/python3
"""Every JSON file the CLI reads, mutated: what a user's hand-edited copy of a shipped file may hold. Session 45
ran this kind of mutation by the thousand and found a calibration value of 1e308 read without complaint (the
closed form and the engine then disagreed by 287 orders of magnitude), compute-fit.json's `fit` records and
measurement records whose sizes and times were no sizes and times read or silently replaced. This keeps a
fixed, seeded sample of such mutations (one leaf of the shipped file changed, deleted or given an unknown key
beside it) for each format, and checks for each run:

* it ends in time with exit status 0 or 2 (never a crash, an "internal error" or a hang);
* exit 2 prints one line on stderr, `racksim: error: ...`;
* exit 0 prints no NaN or infinity as a number;
* a key added beside a known one (an unknown key) is exit 2 naming it: every one of these formats is strict.

Deterministic: the same seed gives the same cases, so a failure here is reproducible by its printed case."""
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIME_LIMIT_S = 60
CASES_PER_FORMAT = 12
SEED = 45

# A bare NaN or infinity as a JSON value or a table cell (a quoted "nan" inside a text is not one).
NON_FINITE = re.compile(r'(?<![A-Za-z"_-])(-?inf(inity)?|nan)(?![A-Za-z"_-])', re.IGNORECASE)
ODD_VALUES = [0, -1, 1e308, -1e308, 0.5, 2 ** 63, "", "x", None, True, [], {}]


def leaf_paths(doc, prefix=()):
    """Paths to every value under `doc` (the first 4 items of each array, to keep the sample about the keys)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,)
            yield from leaf_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:4]):
            yield prefix + (i,)
            yield from leaf_paths(v, prefix + (i,))


def parent_of(doc, path):
    for k in path[:-1]:
        doc = doc[k]
    return doc


# Maps whose keys are names the file chooses (a topology's references, cited by the `source` texts): a key added
# there is one more name, not an unknown key.
FREE_FORM_MAPS = {("references",)}


def mutate(doc, rng):
    """One mutation of a copy of `doc`: (the mutated copy, a description, whether it added an unknown key)."""
    doc = copy.deepcopy(doc)
    paths = [p for p in leaf_paths(doc)]
    path = rng.choice(paths)
    parent, key = parent_of(doc, path), path[-1]
    r = rng.random()
    if isinstance(parent, dict) and r < 0.2:
        parent[str(key) + "_unknown"] = parent[key]
        return doc, f"unknown key {path}_unknown", tuple(path[:-1]) not in FREE_FORM_MAPS
    if isinstance(parent, dict) and r < 0.35:
        del parent[key]
        return doc, f"deleted {path}", False
    value = rng.choice(ODD_VALUES)
    parent[key] = value
    return doc, f"{path} = {value!r}", False


def write_json(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def load(rel):
    with open(os.path.join(SOURCE, rel)) as f:
        return json.load(f)


# Each format: the shipped file it starts from, and the command that reads a mutated copy at `path`.
FORMATS = {
    "calibration": ("calibrate/default.json", lambda path: [
        "collective", "--system", "hgx-h100", "--racks", "2", "--gpus", "16", "--op", "all_reduce", "--bytes", "64M",
        "--model", "analytic", "--format", "json", "--calibration", path]),
    "topology": ("topologies/hgx-b200.json", lambda path: ["show", path, "--format", "json"]),
    "model": ("models/workload/presets/mixtral-8x22b.json", lambda path: [
        "plan", "--system", "hgx-b200", "--gpus", "16", "--model", path, "--global-batch", "64", "--seq-len", "4096",
        "--engine-top", "0", "--compare", "none", "--no-failures", "--top", "1", "--format", "json"]),
    "jobs": ("scenarios/shared-fabric.json", lambda path: ["jobs", path, "--format", "json"]),
    "measurement records": ("calibrate/data/published_measurements.json", lambda path: [
        "validate", "--no-cross-validation", "--no-probes", "--public", "none", "--data", path, "--format", "json",
        "--out-dir", path + ".out"]),
    "compute-fit": ("calibrate/training/compute-fit.json", lambda path: [
        "plan", "--system", "hgx-h100", "--racks", "1", "--model", "llama-3.1-8b", "--global-batch", "64", "--seq-len",
        "4096", "--engine-top", "0", "--compare", "none", "--no-failures", "--top", "1", "--format", "json",
        "--compute-fit", path]),
}

failures = []
rng = random.Random(SEED)
with tempfile.TemporaryDirectory() as tmp:
    for name, (rel, command) in FORMATS.items():
        shipped = load(rel)
        if isinstance(shipped, list):  # a file of records: a few of them, so that each run stays short
            shipped = shipped[:6]
        for case in range(CASES_PER_FORMAT):
            doc, what, unknown_key = mutate(shipped, rng)
            path = write_json(tmp, f"{name}.json", doc)
            label = f"{name} #{case} ({what})"
            try:
                r = subprocess.run([BIN, *command(path)], capture_output=True, text=True, timeout=TIME_LIMIT_S)
            except subprocess.TimeoutExpired:
                failures.append(f"{label}: no answer in {TIME_LIMIT_S} s")
                continue
            finally:
                shutil.rmtree(path + ".out", ignore_errors=True)
            err = r.stderr.strip().splitlines()
            if r.returncode not in (0, 2):
                failures.append(f"{label}: exit {r.returncode}: {' | '.join(err)[:300]}")
            elif r.returncode == 2 and (len(err) != 1 or not err[0].startswith("racksim: error: ")):
                failures.append(f"{label}: exit 2 without one 'racksim: error:' line: {err}")
            elif r.returncode == 0 and NON_FINITE.search(r.stdout):
                failures.append(f"{label}: a non-finite number in the output: {NON_FINITE.search(r.stdout).group(0)}")
            elif unknown_key and r.returncode != 2:
                failures.append(f"{label}: an unknown key was accepted (exit {r.returncode})")
            elif unknown_key and "_unknown" not in err[0]:
                failures.append(f"{label}: the refusal does not name the unknown key: {err[0]}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s) in {CASES_PER_FORMAT * len(FORMATS)} mutated files" if failures else
      f"ok: {CASES_PER_FORMAT * len(FORMATS)} mutated files, each refused in one line or read")
sys.exit(1 if failures else 0)
