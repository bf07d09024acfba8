#!/usr/bin/python3
"""Issue 14: racksim's processes back malloc with transparent huge pages (sim/core/hugepage_malloc.hpp), the CLI
by re-executing itself for large runs, small calls by advising huge pages on their first 16 MiB of heap in their own
process (heap_on_huge_pages), and the engine by being spawned with the tunable. Where memory lives must not change a
result: the same run with RACKSIM_HUGEPAGES=off gives the same bytes, in the engine (a 576-GPU hierarchical
all-reduce, large enough to re-execute; a 72-GPU ring, which is not) and in the analytic model."""
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))
RUNS = [
    ["collective", "--system", "gb200-nvl72", "--racks", "8", "--gpus", "576", "--algo", "hierarchical",
     "--op", "all_reduce", "--bytes", "1G", "--format", "json"],
    ["collective", "--system", "gb200-nvl72", "--gpus", "72", "--algo", "ring", "--op", "all_reduce", "--bytes", "1G",
     "--format", "json", "--model", "engine"],
    ["collective", "--system", "hgx-h100", "--gpus", "8", "--algo", "ring", "--op", "all_reduce", "--bytes", "64M",
     "--format", "json"],
    ["sweep", "--system", "gb200-nvl72", "--racks", "8", "--gpus", "576", "--op", "all_reduce", "-b", "1M", "-e", "64M",
     "--format", "json"],
]


def run(args, hugepages):
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    env.pop("RACKSIM_HUGEPAGES_SET", None)
    env["RACKSIM_ENGINE_DAEMON"] = "0"  # each run spawns its own engine, with or without the tunable
    if not hugepages:
        env["RACKSIM_HUGEPAGES"] = "off"
    p = subprocess.run([BIN] + args, capture_output=True, env=env, timeout=300 * TIMEOUT_SCALE)
    if p.returncode != 0:
        raise SystemExit("racksim %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.decode()[:500]))
    return p.stdout


def main():
    failures = []
    for args in RUNS:
        on, off = run(args, True), run(args, False)
        same = on == off
        print("%s: %d bytes, %s" % (" ".join(args[:8]), len(on), "identical" if same else "DIFFERENT"))
        if not same:
            failures.append(" ".join(args))
    if failures:
        print("results changed with malloc on huge pages: " + "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
