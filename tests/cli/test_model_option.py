#!/usr/bin/python3
"""`racksim collective` and `racksim sweep` `--model auto|engine|analytic`: which model answers.

* analytic: the closed form (models/analytic/analytic_model.hpp), in the engine's JSON shape with
  "engine": {"mode": "analytic"} and no links; the same numbers as racksim.analytic() from Python.
* engine: the discrete-event engine, or its refusal (exit 2, one line) where the run is over its memory
  or time budget (an EngineLimitError: a flat ring through 1 440 GPUs is 66 M transfers).
* auto (the default): the engine, and the closed form where the engine refuses that way, saying why in
  engine.note; with --fail, --trace or --aggregation (which the closed form cannot honour) the refusal stands.
"""
import json
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
BUILD = os.path.dirname(os.path.dirname(os.path.abspath(BIN)))

failures = 0


def check(name, ok, detail=""):
    global failures
    print("ok  " if ok else "FAIL", name, "" if ok else detail)
    failures += not ok


def run(args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


# A flat ring through 19 GB200 racks (NCCL 2.28 picks Ring/LL128 at 8 GiB with NVLS off): over the memory budget. An
# odd rack count: the rings have no symmetry to list them by (with an even one the engine runs their quotient).
BIG = ["collective", "--system", "gb200-nvl72", "--racks", "19", "--gpus", "1368", "--op", "all_reduce", "--bytes", "8G",
       "--nvls", "off"]
SMALL = ["collective", "--system", "hgx-h100", "--gpus", "8", "--op", "all_reduce", "--bytes", "1G"]


def one_line_refusal(name, r, words):
    lines = r.stderr.splitlines()
    ok = r.returncode == 2 and not r.stdout and len(lines) == 1 and all(w in r.stderr for w in words)
    check(name, ok, f"exit {r.returncode}, stdout {r.stdout[:200]!r}, stderr {r.stderr[:400]!r}")


def main():
    # engine: the refusal, as before --model existed.
    one_line_refusal("--model engine refuses 1 368 GPUs in one ring", run(BIG + ["--model", "engine"]),
                     ["--gpus", "all_reduce/ring on 1368 GPUs", "transfers", "memory budget", "--model analytic"])

    # analytic: the closed form's numbers, marked as such.
    r = run(BIG + ["--model", "analytic"])
    analytic = json.loads(r.stdout) if r.returncode == 0 else {}
    check("--model analytic prices it", r.returncode == 0 and analytic.get("engine", {}).get("mode") == "analytic"
          and analytic.get("links") == [] and analytic.get("algo") == "ring" and analytic.get("protocol") == "LL128"
          and analytic.get("time_us", 0) > 0, r.stdout[:300] + r.stderr[:300])

    # auto: the same closed form, with the engine's reason in the note.
    r = run(BIG)
    auto = json.loads(r.stdout) if r.returncode == 0 else {}
    note = auto.get("engine", {}).get("note", "")
    check("auto falls back to the closed form, saying why", r.returncode == 0 and auto.get("engine", {}).get("mode") == "analytic"
          and "will not run" in note and "59841792 transfers" in note, r.stdout[:300] + r.stderr[:300])
    check("auto's fallback is --model analytic's result", auto.get("time_us") == analytic.get("time_us")
          and auto.get("busbw_GBps") == analytic.get("busbw_GBps") and auto.get("phases") == analytic.get("phases"),
          f"{auto.get('time_us')} vs {analytic.get('time_us')}")
    # busbw is nccl-tests' rule on the closed form's time: 2 (n - 1) / n x bytes / time.
    n, size = 1368, 8 * 2 ** 30
    expected = 2 * (n - 1) / n * size / (analytic.get("time_us", 1) * 1e-6) / 1e9
    check("busbw = 2 (n-1)/n S / t", abs(analytic.get("busbw_GBps", 0) / expected - 1) < 1e-5,
          f"{analytic.get('busbw_GBps')} vs {expected:.6g}")

    r = run(BIG + ["--format", "table"])
    check("the table says the engine did not run", r.returncode == 0 and "engine: not run; the closed form" in r.stdout,
          r.stdout[-400:])

    # auto keeps the refusal where the closed form cannot honour the request.
    one_line_refusal("auto with --fail keeps the engine's refusal", run(BIG + ["--fail", "gpu:1367"]),
                     ["--gpus", "transfers"])
    one_line_refusal("--model analytic with --fail is refused", run(SMALL + ["--model", "analytic", "--fail", "gpu:3"]),
                     ["--model", "invalid value analytic", "--fail"])
    one_line_refusal("--model analytic with --aggregation is refused", run(SMALL + ["--model", "analytic", "--aggregation", "off"]),
                     ["--model", "--aggregation"])
    one_line_refusal("--model bogus", run(SMALL + ["--model", "bogus"]), ["--model", "bogus"])

    # A run the engine takes: auto is the engine (links, an engine mode), analytic is not.
    r = run(SMALL)
    eng = json.loads(r.stdout) if r.returncode == 0 else {}
    check("auto runs the engine where it can", eng.get("engine", {}).get("mode") in ("aggregated", "full")
          and len(eng.get("links", [])) > 0, r.stdout[:300] + r.stderr[:300])
    r = run(SMALL + ["--model", "analytic"])
    ana = json.loads(r.stdout) if r.returncode == 0 else {}
    # One HGX H100 at 1 GiB: NVLS, where the engine and the closed form agree within 1 % (the pipeline's fill).
    check("8 GPUs: the closed form within 1 % of the engine", ana.get("algo") == eng.get("algo") == "nvls"
          and abs(ana.get("time_us", 0) / eng.get("time_us", 1) - 1) < 0.01, f"{ana.get('time_us')} vs {eng.get('time_us')}")

    # Where the engine runs a pipeline coarser than NCCL's chunks (NVLS-tree over 20 racks at 8 GiB: 17 pieces, NCCL
    # 128), a warning gives the closed form at NCCL's depth: --model analytic's time, to its 6 digits.
    r = run(["collective", "--system", "gb200-nvl72", "--racks", "20", "--gpus", "1440", "--op", "all_reduce", "--bytes", "8G"])
    coarse = json.loads(r.stdout) if r.returncode == 0 else {}
    r2 = run(["collective", "--system", "gb200-nvl72", "--racks", "20", "--gpus", "1440", "--op", "all_reduce", "--bytes", "8G",
              "--model", "analytic"])
    closed = json.loads(r2.stdout) if r2.returncode == 0 else {}
    notes = [w for w in coarse.get("warnings", []) if w.startswith("the engine ran this pipeline in ")]
    check("a coarse pipeline is named with the closed form's time", coarse.get("algo") == "nvls_tree" and len(notes) == 1
          and "where NCCL runs 128 chunks" in notes[0] and f"gives {closed.get('time_us'):.6g} us" in notes[0]
          and closed.get("time_us", 0) < coarse.get("time_us", 0), f"{notes} {closed.get('time_us')} {coarse.get('time_us')}")
    check("no such warning where the engine runs NCCL's depth", not any("pieces where NCCL" in w for w in eng.get("warnings", [])),
          str(eng.get("warnings")))

    # A flat ring through 4 racks of 71 GPUs (NCCL's Ring/LL128 at 1 GiB with NVLS off: 16 rings, 2.6 M transfers;
    # 71 GPUs a rack put the rings' rails out of step, so there is no symmetry to list them by) is over the engine's
    # cap on a ring's transfers, the other kind of refusal: auto answers with the closed form too.
    RING8 = ["collective", "--system", "gb200-nvl72", "--racks", "4", "--gpus", "284", "--op", "all_reduce", "--bytes", "1G",
             "--nvls", "off"]
    one_line_refusal("--model engine refuses 284 GPUs in 16 rings", run(RING8 + ["--model", "engine"]),
                     ["--gpus", "284 ranks in 16 rings", "transfers for the engine", "--model analytic"])
    r = run(RING8)
    ring8 = json.loads(r.stdout) if r.returncode == 0 else {}
    r2 = run(RING8 + ["--model", "analytic"])
    one = json.loads(r2.stdout) if r2.returncode == 0 else {}
    check("auto falls back where a ring has too many transfers", ring8.get("engine", {}).get("mode") == "analytic"
          and "will not run" in ring8.get("engine", {}).get("note", "") and "2571904" in ring8["engine"]["note"]
          and ring8.get("algo") == "ring" and ring8.get("time_us") == one.get("time_us"), r.stdout[:300] + r.stderr[:300])

    # With 8 racks the rings are symmetric (ring onto ring, racks turned by two): the engine runs their quotient,
    # 165 600 of the 10.6 M transfers (issue 14), and gives the closed form's bus bandwidth to its sixth digit (a
    # flat ring running alone: docs/model.md section 4).
    FLAT8 = ["collective", "--system", "gb200-nvl72", "--racks", "8", "--gpus", "576", "--op", "all_reduce", "--bytes", "1G",
             "--nvls", "off", "--format", "json"]
    r = run(FLAT8 + ["--model", "engine"])
    flat = json.loads(r.stdout) if r.returncode == 0 else {}
    r2 = run(FLAT8 + ["--model", "analytic"])
    flat_closed = json.loads(r2.stdout) if r2.returncode == 0 else {}
    check("the engine runs 576 GPUs in 16 rings as their quotient", flat.get("engine") == {
        "mode": "aggregated", "tasks": 10598400, "simulated_tasks": 165600,
        "note": "all_reduce/ring listed by its symmetry: 64 permutations of the ranks, one task per orbit"}
          and flat.get("algo") == "ring"
          and abs(flat.get("busbw_GBps", 0) / flat_closed.get("busbw_GBps", 1) - 1) < 1e-5,
          f"{flat.get('engine')} {flat.get('busbw_GBps')} vs {flat_closed.get('busbw_GBps')} {r.stderr[:300]}")
    # Its listed schedule (165 600 tasks, ~130 MB by the schedule estimate) is held to the memory budget like any:
    # under 120 MB it is not listed, and the full schedule's check refuses the run, naming the budget.
    small = subprocess.run([BIN, *FLAT8, "--model", "engine"], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, RACKSIM_MEMORY_BUDGET="120M"))
    check("the quotient is held to the memory budget", small.returncode == 2 and not small.stdout
          and "RACKSIM_MEMORY_BUDGET=120M" in small.stderr and "10598400 transfers" in small.stderr, small.stderr[:300])

    # racksim sweep: the same choice per size. 1 KiB (a tree) the engine runs; 1 GiB (the flat ring above) it
    # will not: the closed form prices it in its place, and the table says so.
    sweep = ["sweep", "--system", "gb200-nvl72", "--racks", "4", "--gpus", "284", "--op", "all_reduce", "--nvls", "off",
             "-b", "1K", "-e", "1G", "-f", "1048576"]
    r = run(sweep + ["--format", "json"])
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    modes = [row.get("engine", {}).get("mode") for row in rows]
    check("sweep auto: the engine where it can, the closed form in its place", r.returncode == 0 and len(rows) == 2
          and modes[0] in ("aggregated", "full") and modes[1] == "analytic" and rows[1]["bytes"] == 2 ** 30,
          f"{modes} {r.stderr[:300]}")
    check("sweep's closed-form row = collective --model analytic", len(rows) == 2 and rows[1].get("time_us") == one.get("time_us"),
          f"{rows[1].get('time_us') if len(rows) == 2 else None} vs {one.get('time_us')}")
    r = run(sweep)
    check("sweep table names the closed-form rows", r.returncode == 0
          and "# Priced by the closed form (the engine did not run them): 1073741824\n" in r.stdout, r.stdout[-300:])
    one_line_refusal("sweep --model engine refuses", run(sweep + ["--model", "engine"]), ["--gpus", "transfers"])
    r = run(sweep + ["--model", "analytic", "--format", "json"])
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    check("sweep --model analytic: every row the closed form", r.returncode == 0 and len(rows) == 2
          and all(row["engine"]["mode"] == "analytic" for row in rows) and rows[1]["time_us"] == one.get("time_us"),
          r.stdout[:200] + r.stderr[:200])
    one_line_refusal("sweep --model analytic --jobs 2 is refused", run(sweep + ["--model", "analytic", "--jobs", "2"]),
                     ["--model", "--jobs"])

    # The same numbers as Python's racksim.analytic().
    bindings = os.path.join(BUILD, "bindings")
    if os.path.isdir(bindings) and any(n.startswith("_racksim") for n in os.listdir(bindings)):
        code = ("import racksim, json; r = racksim.analytic('gb200-nvl72', 'all_reduce', 1368, '8G', racks=19, nvls=False); "
                "print(json.dumps([r['time_us'], r['busbw_GBps'], r['algo'], r['protocol'], r['channels']]))")
        env = dict(os.environ, PYTHONPATH=bindings + ":" + os.path.join(SOURCE, "bindings", "python"))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        py = json.loads(p.stdout) if p.returncode == 0 else None
        check("--model analytic = racksim.analytic()", py == [analytic.get("time_us"), analytic.get("busbw_GBps"),
                                                            analytic.get("algo"), analytic.get("protocol"),
                                                            analytic.get("channels")], f"{py} {p.stderr[-300:]}")
        # System.collective(model=) as the CLI: auto answers with the closed form, engine raises (naming Python's `gpus`, as the
        # module names every argument; session 45), analytic with fail= is refused.
        code = """
import json, racksim
s = racksim.load('gb200-nvl72', racks=19)
auto = s.collective('all_reduce', 1368, '8G', nvls=False)
out = [auto['engine']['mode'], auto['time_us'], 'will not run' in auto['engine']['note']]
for kwargs in ({'model': 'engine'}, {'model': 'analytic', 'fail': 'gpu:3'}, {'model': 'closed'}):
    try:
        s.collective('all_reduce', 1368, '8G', nvls=False, **kwargs)
        out.append('no error')
    except racksim.InputError as e:
        out.append(str(e).split(':')[0])
print(json.dumps(out))
"""
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        py = json.loads(p.stdout) if p.returncode == 0 else None
        check("System.collective(model=) as --model", py == ["analytic", analytic.get("time_us"), True, "gpus", "model",
                                                            "model"], f"{py} {p.stderr[-300:]}")
        # System.sweep(model=) as racksim sweep --model: the same rows.
        code = """
import json, racksim
s = racksim.load('gb200-nvl72', racks=4)
df = s.sweep('all_reduce', 284, '1K', '1G', 1048576, nvls=False)
print(json.dumps([[e['mode'] for e in df['engine']], list(df['time_us'])]))
"""
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        py = json.loads(p.stdout) if p.returncode == 0 else None
        check("System.sweep(model='auto') as racksim sweep", py is not None and py[0][1] == "analytic"
              and py[0][0] in ("aggregated", "full") and py[1][1] == one.get("time_us"), f"{py} {p.stderr[-300:]}")
    else:
        print("skip bindings: no _racksim module in", bindings)

    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
