#!/usr/bin/python3
"""Issue 16: no engine process is forked from a multi-threaded process. Runs `racksim sweep --jobs 2` and
Python code with threads (a background thread as in a Jupyter kernel, a thread pool as scripts/headline.py
used) under an LD_PRELOAD shim (tests/fork_guard) that kills the process, exit 86, at any fork() made
while it has more than one thread. Before the fix, sweep --jobs 2 forked from its worker threads and the
bindings from Python threads: both ended with 86 here. The results must equal a plain run's, byte for
byte."""
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
BUILD = os.environ["RACKSIM_BUILD_DIR"]
GUARD = os.environ["RACKSIM_FORK_GUARD"]
PRELOADED = os.environ.get("LD_PRELOAD", "")  # libasan under make sanitize: it must stay first
GUARDED = dict(os.environ, LD_PRELOAD=f"{PRELOADED} {GUARD}".strip(),
               PYTHONPATH=f"{BUILD}/bindings:{SOURCE}/bindings/python", MPLBACKEND="Agg")

PYTHON_THREADS = r'''
import concurrent.futures, json, threading, time
import racksim
stop = threading.Event()
background = threading.Thread(target=lambda: stop.wait(), daemon=True)  # a kernel's heartbeat thread
background.start()
h100 = racksim.load("hgx-h100")
one = h100.collective("all_reduce", 8, "64M", algo="ring")
df = h100.sweep("all_reduce", 8, "1M", "16M", step_factor=4, algo="ring", jobs=2)
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:   # as headline.py did
    pair = list(pool.map(lambda b: h100.collective("all_reduce", 8, b, algo="nvls")["time_us"], ["1M", "4M"]))
stop.set()
print(json.dumps({"one": one["time_us"], "sweep": list(df["time_us"]), "pair": pair}))
'''

PYTHON_PLAIN = r'''
import json
import racksim
h100 = racksim.load("hgx-h100")
one = h100.collective("all_reduce", 8, "64M", algo="ring")
df = h100.sweep("all_reduce", 8, "1M", "16M", step_factor=4, algo="ring", jobs=1)
pair = [h100.collective("all_reduce", 8, b, algo="nvls")["time_us"] for b in ["1M", "4M"]]
print(json.dumps({"one": one["time_us"], "sweep": list(df["time_us"]), "pair": pair}))
'''


def main():
    failures = []
    sweep = ["sweep", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--algo", "ring",
             "--min-bytes", "1M", "--max-bytes", "64M", "--format", "json"]
    plain = subprocess.run([BIN, *sweep, "--jobs", "1"], capture_output=True, text=True, timeout=300)
    guarded = subprocess.run([BIN, *sweep, "--jobs", "2"], capture_output=True, text=True, timeout=300, env=GUARDED)
    if guarded.returncode != 0:
        failures.append(f"sweep --jobs 2 under the fork guard: exit {guarded.returncode}: {guarded.stderr.strip()}")
    elif guarded.stdout != plain.stdout:
        failures.append("sweep --jobs 2 differs from --jobs 1")
    # The guard itself works: a threaded fork is caught.
    probe = subprocess.run(["/usr/bin/python3", "-c",
                            "import os, threading; t = threading.Thread(target=lambda: __import__('time').sleep(2)); "
                            "t.start(); os.fork()"], capture_output=True, text=True, env=GUARDED, timeout=60)
    if probe.returncode != 86:
        failures.append(f"the fork guard did not catch a threaded fork (exit {probe.returncode})")
    threaded = subprocess.run(["/usr/bin/python3", "-c", PYTHON_THREADS], capture_output=True, text=True,
                              env=GUARDED, timeout=300)
    reference = subprocess.run(["/usr/bin/python3", "-c", PYTHON_PLAIN], capture_output=True, text=True,
                               env=dict(GUARDED, LD_PRELOAD=PRELOADED), timeout=300)
    if threaded.returncode != 0:
        failures.append(f"Python with threads under the fork guard: exit {threaded.returncode}: {threaded.stderr.strip()[-500:]}")
    elif reference.returncode != 0:
        failures.append(f"plain Python run failed: {reference.stderr.strip()[-500:]}")
    elif threaded.stdout != reference.stdout:
        failures.append(f"threaded results differ: {threaded.stdout!r} vs {reference.stdout!r}")
    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
