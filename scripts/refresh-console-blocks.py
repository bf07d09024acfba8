#!/usr/bin/python3
"""Rewrites the outputs shown in the ```console blocks of README.md and docs/*.md with what racksim prints
today, for a model change that moves numbers on purpose (tests/docs/test_console_blocks.py then passes).

    scripts/refresh-console-blocks.py [path/to/racksim] [FILE.md ...]

Commands run as the test runs them (one scratch directory per block, linked to the repository's top-level
entries). An output shown with `...` elisions, or a command whose exit status differs from its comment, is
left alone and listed: fix those by hand. Review the diff before committing: a number that moved is a
claim that changed.
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    binary = argv[0] if argv and not argv[0].endswith(".md") else os.path.join(SOURCE, "build", "cli", "racksim")
    files = [a for a in argv if a.endswith(".md")] or (
        [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md"))))
    by_hand = []
    for path in files:
        lines = open(path, encoding="utf-8").read().split("\n")
        out, i, changed = [], 0, False
        while i < len(lines):
            out.append(lines[i])
            if lines[i].strip() != "```console":
                i += 1
                continue
            i += 1
            block = []
            while i < len(lines) and lines[i].strip() != "```":
                block.append(lines[i])
                i += 1
            with tempfile.TemporaryDirectory() as tmp:
                for entry in os.listdir(SOURCE):
                    if not entry.startswith("."):
                        os.symlink(os.path.join(SOURCE, entry), os.path.join(tmp, entry))
                k = 0
                while k < len(block):
                    line = block[k]
                    out.append(line)
                    k += 1
                    if not line.startswith("$ "):
                        continue
                    shown = []
                    while k < len(block) and not block[k].startswith("$ "):
                        shown.append(block[k])
                        k += 1
                    text, comment = (line[2:].split(" #", 1) + [""])[:2] if " #" in line else (line[2:], "")
                    status = re.search(r"exit status (\d+)", comment)
                    want = int(status.group(1)) if status else 0
                    args = shlex.split(text)
                    if not args or args[0] != "racksim":
                        out.extend(shown)
                        continue
                    try:
                        run = subprocess.run([binary, *args[1:]], cwd=tmp, capture_output=True, text=True, timeout=900)
                    except subprocess.TimeoutExpired:
                        by_hand.append(f"{os.path.relpath(path, SOURCE)}: {text.strip()} (no answer in 900 s)")
                        out.extend(shown)
                        continue
                    printed = [p.rstrip() for p in (run.stdout + run.stderr).rstrip("\n").split("\n")]
                    # Blank lines that separated this output from the next command stay.
                    trailing = len(shown) - len([s for s in "\n".join(shown).rstrip("\n").split("\n")]) if shown else 0
                    printed += [""] * trailing
                    if any(s.strip() == "..." or s.rstrip().endswith(" ...") for s in shown) or run.returncode != want:
                        by_hand.append(f"{os.path.relpath(path, SOURCE)}: {text.strip()} (exit {run.returncode})")
                        out.extend(shown)
                        continue
                    if not any(x.strip() for x in shown):  # run for its files (a dump the next command reads); its output stays unshown
                        continue
                    changed = changed or printed != shown
                    out.extend(printed)
            if i < len(lines):
                out.append(lines[i])  # closing fence
            i += 1
        if changed:
            open(path, "w", encoding="utf-8").write("\n".join(out))
            print("rewrote", os.path.relpath(path, SOURCE))
    for b in by_hand:
        print("by hand:", b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
