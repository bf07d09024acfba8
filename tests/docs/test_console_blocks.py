#!/usr/bin/python3
"""Docs that cannot go stale: every ```console block of README.md and docs/*.md is re-run.

In a console block, a line starting with `$ racksim ` is a command; the lines under it, up to the next
`$` line or the end of the block, are what it prints (stdout, then stderr). The commands of one block
run in order in one scratch directory (so `schedule dump --out ring.json` feeds `schedule check
ring.json`) that links to the repository's top-level entries (so `scenarios/x.json` resolves). Comparison, line by line:
  * a shown line `...` stands for any number of printed lines (an elision);
  * a shown line ending in ` ...` must match the start of a printed line;
  * tokens (split on whitespace) must be equal, except numbers, which may differ by NUMERIC_TOLERANCE
    (relative) -- room for the last printed digit, never for a changed model;
  * a command with nothing shown under it must only succeed (its output is not quoted).
A command exits 0 unless its comment says `# exit status N`. A trailing `# comment` is not passed on.
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
NUMERIC_TOLERANCE = 1e-3  # relative; the docs print 4-6 significant digits
NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(.*)$")


def blocks(path):
    """(first line number, lines) of every ```console block."""
    out, current, start = [], None, 0
    for i, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        if current is None and line.strip() == "```console":
            current, start = [], i + 1
        elif current is not None and line.strip() == "```":
            out.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return out


def commands(lines):
    """(command line, expected exit status, shown output lines) in order."""
    out = []
    for line in lines:
        if line.startswith("$ "):
            text = line[2:]
            comment = ""
            if " #" in text:
                text, comment = text.split(" #", 1)
            status = re.search(r"exit status (\d+)", comment)
            out.append((text.strip(), int(status.group(1)) if status else 0, []))
        elif out:
            out[-1][2].append(line)
    return out


def split_number(token):
    """(value, rest) for a token that starts with a number ("37.0%" -> 37.0, "%"), else (None, token)."""
    m = NUMBER.match(token)
    return (float(m.group(1)), m.group(2)) if m else (None, token)


def same_tokens(shown, printed):
    a, b = shown.split(), printed.split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        (nx, rx), (ny, ry) = split_number(x), split_number(y)
        if nx is None or ny is None or rx != ry:
            return False
        if abs(nx - ny) > NUMERIC_TOLERANCE * max(abs(nx), abs(ny)):
            return False
    return True


def line_matches(shown, printed):
    if shown.endswith(" ...") or shown.endswith("..."):
        head = shown[:-3].rstrip()
        words = head.split()
        return same_tokens(" ".join(words), " ".join(printed.split()[: len(words)]))
    return same_tokens(shown, printed)


def matches(shown, printed, i=0, j=0):
    """Does `shown` (with `...` elisions) match all of `printed`?"""
    while i < len(shown):
        if shown[i].strip() == "...":
            if i + 1 == len(shown):
                return True
            return any(matches(shown, printed, i + 1, k) for k in range(j, len(printed) + 1))
        if j >= len(printed) or not line_matches(shown[i], printed[j]):
            return False
        i, j = i + 1, j + 1
    return j == len(printed)


def first_difference(shown, printed):
    for k, (a, b) in enumerate(zip(shown, printed)):
        if a.strip() != "..." and not line_matches(a, b):
            return f"line {k + 1}: shown {a.strip()!r}\n        printed {b.strip()!r}"
    return f"shown {len(shown)} line(s), printed {len(printed)}"


def main():
    docs = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
    failures = ran = 0
    for doc in docs:
        for start, lines in blocks(doc):
            with tempfile.TemporaryDirectory() as tmp:
                # The docs name repository files by relative paths (scenarios/..., topologies/...): the
                # scratch directory links to every top-level entry, and files a command writes stay in it.
                for entry in os.listdir(SOURCE):
                    if not entry.startswith("."):
                        os.symlink(os.path.join(SOURCE, entry), os.path.join(tmp, entry))
                for text, status, shown in commands(lines):
                    if not text.startswith("racksim "):
                        continue
                    ran += 1
                    argv = [BIN] + shlex.split(text)[1:]
                    run = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, timeout=600 * TIMEOUT_SCALE)
                    printed = (run.stdout + run.stderr).splitlines()
                    while shown and not shown[-1].strip():
                        shown = shown[:-1]
                    where = f"{os.path.relpath(doc, SOURCE)}:{start}: $ {text}"
                    problem = None
                    if run.returncode != status:
                        problem = f"exit status {run.returncode}, expected {status}: {run.stderr.strip()[:300]}"
                    elif shown and not matches(shown, printed):
                        problem = first_difference(shown, printed)
                    print(("FAIL " if problem else "ok   ") + where)
                    if problem:
                        print("     " + problem)
                        failures += 1
    print(f"{ran} command(s) from console blocks, {failures} stale")
    if ran == 0:
        print("no console block found: the test would pass vacuously")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
