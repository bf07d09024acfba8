#!/usr/bin/python3
"""--racks is bounded by a memory estimate, not a fixed max_racks (issue 14, part 3).

A request over the estimate is refused at once (nothing large built first) with exit status 2 and one
line naming the value, the estimate (MB; vertices and edges, or tasks and transfers) and what the memory
budget allows; the same from the Python bindings as racksim.InputError. Rack counts refused before by
gb200-nvl72's max_racks 64 but within the estimate now run. Single hosts keep their physical max_racks 1."""
import json
import os
import subprocess
import sys
import time

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
BUILD = os.path.dirname(os.path.dirname(os.path.abspath(BIN)))

failures = 0


def check(name, ok, detail=""):
    global failures
    print("ok  " if ok else "FAIL", name, "" if ok else detail)
    failures += not ok


def run(args, env_extra=None, timeout=60):
    env = dict(os.environ)
    env.pop("RACKSIM_MEMORY_BUDGET", None)
    env.update(env_extra or {})
    start = time.monotonic()
    r = subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return r, time.monotonic() - start


def refused(name, args, words, env_extra=None, max_s=None):
    r, wall = run(args, env_extra)
    lines = r.stderr.splitlines()
    problems = []
    if r.returncode != 2:
        problems.append(f"exit status {r.returncode}, expected 2")
    if r.stdout:
        problems.append(f"stdout not empty: {r.stdout[:200]!r}")
    if len(lines) != 1:
        problems.append(f"stderr is {len(lines)} line(s), expected one: {r.stderr[:500]!r}")
    problems += [f"stderr lacks {w!r}: {r.stderr.strip()!r}" for w in words if w not in r.stderr]
    if max_s is not None and wall > max_s:
        problems.append(f"took {wall:.2f} s, expected under {max_s} s")
    check(f"{name} ({wall:.2f} s)", not problems, "; ".join(problems))


def main():
    # Absurd rack counts: refused by the graph's estimate before anything is built, well under a second.
    refused("show --racks 1000000", ["show", "gb200-nvl72", "--racks", "1000000"],
            ["--racks", "invalid value 1000000", "vertices", "edges", "MB to build", "at most", "racks of gb200-nvl72",
             "memory budget"], max_s=1.0)
    refused("collective --racks 1000000",
            ["collective", "--system", "gb200-nvl72", "--racks", "1000000", "--op", "all_reduce", "--gpus", "72000000",
             "--bytes", "1G", "--algo", "hierarchical"],
            ["--racks", "invalid value 1000000", "MB to build", "at most"], max_s=1.0)
    refused("--racks 2147483647", ["show", "gb200-nvl36x2", "--racks", "2147483647"],
            ["--racks", "invalid value 2147483647", "MB to build", "at most"], max_s=1.0)
    # The budget is the smaller of 8 GiB and the machine's limits; RACKSIM_MEMORY_BUDGET states another.
    refused("1389 racks in a 256 MB budget", ["show", "gb200-nvl72", "--racks", "1389"],
            ["--racks", "invalid value 1389", "MB to build", "racks of gb200-nvl72",
             "memory budget of 268 MB (RACKSIM_MEMORY_BUDGET=256M)"], {"RACKSIM_MEMORY_BUDGET": "256M"}, max_s=1.0)
    # A schedule over the estimate: tasks, transfers and MB named, with what the budget allows (--model engine:
    # the default, auto, answers it with the closed form instead, tests/cli/test_model_option.py).
    refused("hierarchical on 32 racks in a 200 MB budget",
            ["collective", "--system", "gb200-nvl72", "--racks", "32", "--op", "all_reduce", "--gpus", "2304", "--bytes",
             "1G", "--algo", "hierarchical", "--model", "engine"],
            ["--gpus", "all_reduce/hierarchical on 2304 GPUs", "transfers", "tasks", "MB with the", "graph)", "at most",
             "memory budget: RACKSIM_MEMORY_BUDGET=200M"], {"RACKSIM_MEMORY_BUDGET": "200M"}, max_s=20)
    # Physical caps stay: a single host is one rack.
    refused("dgx-spark --racks 2", ["show", "dgx-spark", "--racks", "2"], ["--racks", "invalid value 2", "[1, 1]"])
    refused("--racks 0", ["show", "gb200-nvl72", "--racks", "0"], ["--racks", "invalid value 0", "a positive integer"])

    # Refused by max_racks 64 before, within the estimate now.
    r, wall = run(["show", "gb200-nvl72", "--racks", "80", "--format", "json"])
    ok = r.returncode == 0 and json.loads(r.stdout).get("gpus") == 5760
    check(f"show gb200-nvl72 --racks 80 runs ({wall:.2f} s)", ok, r.stderr[:300])
    r, wall = run(["collective", "--system", "gb200-nvl72", "--racks", "80", "--op", "all_reduce", "--gpus", "80",
                   "--bytes", "1M"])
    ok = r.returncode == 0 and json.loads(r.stdout).get("racks") == 80 and json.loads(r.stdout).get("time_us", 0) > 0
    check(f"collective on 80 racks runs ({wall:.2f} s)", ok, r.stderr[:300])

    # The bindings: the same estimate, racksim.InputError; 80 racks load and price analytically.
    bindings = os.path.join(BUILD, "bindings")
    if any(n.startswith("_racksim") for n in os.listdir(bindings)):
        code = """
import racksim
try:
    racksim.load("gb200-nvl72", racks=1000000)
    print("no error")
except racksim.InputError as e:
    print("InputError", e)
s = racksim.load("gb200-nvl72", racks=80)
r = s.analytic("all_reduce", 80 * 72, "1G", algo="hierarchical")
print("analytic", r["racks"], r["time_us"] > 0)
"""
        env = dict(os.environ, PYTHONPATH=bindings + ":" + os.path.join(SOURCE, "bindings", "python"))
        env.pop("RACKSIM_MEMORY_BUDGET", None)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        ok = ("InputError" in p.stdout and "MB to build" in p.stdout and "at most" in p.stdout
              and "analytic 80 True" in p.stdout)
        check("bindings: racks=1000000 raises racksim.InputError, 80 racks price", ok, (p.stdout + p.stderr)[-500:])
    else:
        print("skip bindings: no _racksim module in", bindings)

    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
