#!/usr/bin/python3
"""Issue 16 ("nothing silently wrong"): every input that once crashed, hung, ended in "internal error", was
silently misread or left a partial file behind. Each case runs the CLI with a time limit and checks:
exit status 2 (bad input) with exactly one line on stderr containing the given words, or the stated
status, and that no output file was left where the run failed.

Run against a build from before the fix (RACKSIM_BIN=<old racksim>), every case here failed."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIME_LIMIT_S = 60  # every case answers in well under a second; a hang is a failure, not a timeout of ctest


def run(args, **kw):
    try:
        return subprocess.run([BIN, *args], capture_output=True, timeout=TIME_LIMIT_S, **kw)
    except subprocess.TimeoutExpired:
        return None


def text(b):
    return b.decode("utf-8", "replace")


def write(path, content, mode="w"):
    with open(path, mode) as f:
        f.write(content)
    return path


def nccl_log(tmp, name, header="# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20",
             extra_lines=(), rows=None):
    lines = ["# nccl-tests version 2.17.1 nccl-headers=22907 nccl-library=22907", "# Collective test starting: all_reduce_perf",
             header]
    lines += ["#  Rank  %d Group  0 Pid 100 on host device  %d [0000:0%d:00] NVIDIA H100 80GB HBM3" % (r, r, r) for r in range(2)]
    lines += list(extra_lines)
    lines += ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"]
    lines += rows if rows is not None else [
        "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0",
        "          64            16     float     sum      -1    11.00    0.01    0.01      0    11.00    0.01    0.01      0"]
    return write(os.path.join(tmp, name), "\n".join(lines) + "\n")


def deep_json(levels):
    return "[" * levels + "]" * levels


def cut_schedule(tmp):
    """A valid-JSON ring schedule with its task list cut to the first quarter (was: busbw 8 618 GB/s, exit 0)."""
    full = os.path.join(tmp, "ring.json")
    r = run(["schedule", "dump", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "64M",
             "--algo", "ring", "--out", full])
    assert r is not None and r.returncode == 0, r
    doc = json.load(open(full))
    doc["tasks"] = doc["tasks"][: len(doc["tasks"]) // 4]
    return write(os.path.join(tmp, "cut.json"), json.dumps(doc))


def cases(tmp):
    """(name, arguments, expected exit status, words stderr must hold, files that must not exist after)."""
    topo = json.load(open(os.path.join(SOURCE, "topologies", "hgx-h100.json")))
    misspelt = json.loads(json.dumps(topo))
    lt = misspelt["link_types"][0]
    lt["bandwith_GBps"] = lt.pop("bandwidth_GBps")
    misspelt_path = write(os.path.join(tmp, "misspelt.json"), json.dumps(misspelt))
    deep_path = write(os.path.join(tmp, "deep.json"), deep_json(100000))
    cal = json.load(open(os.path.join(SOURCE, "calibrate", "default.json")))
    cal["algorithms"]["hopper:all_reduce/rign"] = cal["algorithms"].pop("hopper:all_reduce/ring")
    bad_cal = write(os.path.join(tmp, "rign.json"), json.dumps(cal))
    cal = json.load(open(os.path.join(SOURCE, "calibrate", "default.json")))
    cal["links"]["nvlnk"] = cal["links"].pop("nvlink")
    bad_kind = write(os.path.join(tmp, "nvlnk.json"), json.dumps(cal))
    regular = write(os.path.join(tmp, "a-file"), "x")
    long_line = nccl_log(tmp, "long_all_reduce_perf.txt", extra_lines=["x" * 50000])
    long_row = nccl_log(tmp, "longrow_all_reduce_perf.txt", rows=["8 2 float sum -1 " + "1" * 50000 + " 0 0 0 1 0 0 0"])
    huge_header = nccl_log(tmp, "huge_all_reduce_perf.txt",
                           header="# nThread 1 nGpus 99999999999999999999 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20")
    huge_size = nccl_log(tmp, "hugesize_all_reduce_perf.txt", rows=[
        "99999999999999999999999 2 float sum -1 10.00 0.00 0.00 0 10.00 0.00 0.00 0"])
    many_gpus = os.path.join(tmp, "many_all_reduce_perf.txt")
    write(many_gpus, open(nccl_log(tmp, "tmp_all_reduce_perf.txt")).read()
          .replace("nThread 1 nGpus 1 ", "nThread 25 nGpus 4000 ").replace("#  Rank", "#  Rnk"))
    bad_utf8 = os.path.join(tmp, "utf8_all_reduce_perf.txt")
    write(bad_utf8, open(nccl_log(tmp, "tmp2_all_reduce_perf.txt")).read().replace("NVIDIA H100", "NVIDIA \xff\xfe H100")
          .encode("latin-1"), "wb")
    cut = cut_schedule(tmp)
    out = lambda n: os.path.join(tmp, n)
    return [
        # crashes (SIGSEGV) and internal errors
        ("50 000-char line in an nccl-tests log", ["validate", "--no-probes", "--data", "none", "--nccl-tests",
         long_line + "=hgx-h100", "--out-dir", out("v1")], 0, [], []),
        ("50 000-char number in a row", ["validate", "--no-probes", "--data", "none", "--nccl-tests", long_row + "=hgx-h100",
         "--out-dir", out("v2")], 2, ["line 8", "time (us)", "characters)"], [out("v2")]),
        ("nGpus 100000 in a header", ["validate", "--no-probes", "--data", "none", "--nccl-tests",
         nccl_log(tmp, "n100k_all_reduce_perf.txt", header="# nThread 1 nGpus 100000 minBytes 8 maxBytes 64"),
         "--out-dir", out("v8")], 2, ["nGpus", "'100000'", "[0, 4096]"], [out("v8")]),
        ("nGpus beyond 64 bits", ["validate", "--no-probes", "--data", "none", "--nccl-tests", huge_header,
         "--out-dir", out("v3")], 2, ["nGpus", "line 3", "[0, 4096]"], [out("v3")]),
        ("size beyond 64 bits", ["validate", "--no-probes", "--data", "none", "--nccl-tests", huge_size,
         "--out-dir", out("v4")], 2, ["size (bytes)", "99999999999999999999999"], [out("v4")]),
        ("100 000 ranks (4.2 GB, bad_alloc)", ["validate", "--no-probes", "--data", "none", "--nccl-tests",
         many_gpus + "=hgx-h100", "--out-dir", out("v5")], 2, ["100000 ranks", "12500 racks", "at most"], [out("v5")]),
        ("invalid UTF-8 from a log into JSON", ["validate", "--no-probes", "--data", "none", "--format", "json",
         "--nccl-tests", bad_utf8 + "=hgx-h100", "--out-dir", out("v6")], 0, [], []),
        ("topology nested 100 000 deep", ["show", deep_path], 2, ["nested more than 64 levels"], []),
        ("calibration nested 100 000 deep", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8",
         "--bytes", "1M", "--calibration", deep_path], 2, ["nested more than 64 levels"], []),
        ("model nested 100 000 deep", ["plan", "--system", "gb200-nvl72", "--model", deep_path, "--global-batch", "64",
         "--seq-len", "4096"], 2, ["nested more than 64 levels"], []),
        ("schedule nested 100 000 deep", ["schedule", "check", deep_path], 2, ["nested more than 64 levels"], []),
        # refused up front, with the estimate
        ("all_to_all on 4608 GPUs", ["collective", "--system", "gb200-nvl72", "--racks", "64", "--op", "all_to_all",
         "--gpus", "4608", "--bytes", "1G"], 2, ["21229056 transfers", "at most"], []),
        ("--chunk-bytes 1 on 64M", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes",
         "64M", "--algo", "ring", "--chunk-bytes", "1"], 2, ["--chunk-bytes", "transfers", "at most"], []),
        # 0.5K (1.8 M transfers) ran for over a minute; since exact aggregation (issue 14) it is 14 task classes
        # and answers in ~10-20 s of schedule building. A quarter of it is over the memory limit.
        ("--chunk-bytes 0.25K on 64M", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes",
         "64M", "--algo", "ring", "--chunk-bytes", "0.25K"], 2, ["--chunk-bytes", "transfers", "at most"], []),
        # imex-check: 0-1048575 hung (a quadratic de-duplication); "cannot start" exits 1
        ("imex-check every channel", ["imex-check", "--system", "gb200-nvl72", "--trays", "0-3", "--host-channels",
         "0-1048575", "--container-channels", "0-1048575"], 0, [], []),
        ("imex-check cannot start", ["imex-check", "--system", "gb200-nvl72", "--trays", "0-3", "--container-channels",
         "none"], 1, ["cannot start", "init_error"], []),
        # schedules
        ("schedule run on a cut schedule", ["schedule", "run", cut, "--system", "hgx-h100"], 2,
         ["not a correct", "violation(s)", "first:"], []),
        # outputs written whole or not at all
        ("--trace of a failed run", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes",
         "1M", "--algo", "rign", "--trace", out("t1.json")], 2, ["--algo"], [out("t1.json")]),
        ("--trace of a run on a failed tray", ["collective", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "72",
         "--bytes", "1M", "--fail", "tray:7", "--trace", out("t2.json")], 1, ["tray"], [out("t2.json")]),
        ("schedule dump --out of a failed build", ["schedule", "dump", "--system", "hgx-h100", "--op", "all_reduce",
         "--gpus", "8", "--bytes", "1M", "--algo", "rign", "--out", out("s1.json")], 2, ["--algo"], [out("s1.json")]),
        ("calibrate fit with a bad --report", ["calibrate", "fit", "--no-held-out", "--out", out("cal.json"), "--report",
         os.path.join(regular, "r.md")], 2, ["--report", "Not a directory"], [out("cal.json")]),
        ("validate --out-dir under a regular file", ["validate", "--no-probes", "--out-dir", os.path.join(regular, "d")], 2,
         ["--out-dir", "Not a directory"], []),
        ("validate with an empty --out-dir", ["validate", "--no-probes", "--out-dir", ""], 2, ["--out-dir", "empty"], []),
        ("validate with a bad calibration leaves no out-dir", ["validate", "--no-probes", "--calibration", bad_cal,
         "--out-dir", out("v7")], 2, ["rign"], [out("v7")]),
        # names checked, with a suggestion
        ("calibration key all_reduce/rign", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8",
         "--bytes", "1M", "--calibration", bad_cal], 2, ["all_reduce/rign", "did you mean 'all_reduce/ring'"], []),
        ("calibration link kind nvlnk", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8",
         "--bytes", "1M", "--calibration", bad_kind], 2, ["nvlnk", "did you mean 'nvlink'"], []),
        ("topology with a misspelt required key", ["show", misspelt_path], 2,
         ["bandwidth_GBps", "unknown key 'bandwith_GBps'", "did you mean"], []),
        ("missing --calibration file", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8",
         "--bytes", "1M", "--calibration", out("nope.json")], 2, ["--calibration", "nope.json"], []),
        ("unknown system name, near a real one", ["show", "gb200-nvl27"], 2, ["did you mean 'gb200-nvl72'"], []),
        # paths: "internal error: filesystem error" before
        ("over-long --system path", ["show", "/" + "x" * 5000 + ".json"], 2, ["File name too long", "bytes)"], []),
        ("over-long --system name", ["show", "x" * 5000], 2, ["unknown system", "bytes)"], []),
        ("over-long --model", ["plan", "--system", "gb200-nvl72", "--model", "m" * 5000, "--global-batch", "64",
         "--seq-len", "4096"], 2, ["--model", "bytes)"], []),
        ("--system under a regular file", ["show", os.path.join(regular, "x.json")], 2, ["Not a directory"], []),
        # values silently misread
        ("--swap 2^64 bytes", ["place", "--system", "gb200-nvl72", "--swap", "16777216T"], 2, ["--swap", "below 2^64"], []),
        ("--min-free-kbytes -1", ["place", "--system", "gb200-nvl72", "--min-free-kbytes", "-1"], 2,
         ["--min-free-kbytes", "not negative"], []),
        ("--min-free-kbytes beyond an int", ["place", "--system", "gb200-nvl72", "--min-free-kbytes", "4294967296"], 2,
         ["--min-free-kbytes", "2147483647"], []),
        ("--racks ''", ["show", "gb200-nvl72", "--racks", ""], 2, ["--racks", "empty value"], []),
        ("--gpus ''", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "", "--bytes", "1M"], 2,
         ["--gpus", "empty value"], []),
        ("--tp ''", ["plan", "--system", "gb200-nvl72", "--model", "llama-3.1-8b", "--global-batch", "64", "--seq-len",
         "4096", "--tp", ""], 2, ["empty value"], []),
        ("--gpus in octal", ["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "010", "--bytes", "1M"],
         2, ["--gpus", "not octal"], []),
        ("calibrate fit --name ''", ["calibrate", "fit", "--no-held-out", "--name", "", "--out", out("c2.json")], 2,
         ["--name"], [out("c2.json")]),
        ("calibrate fit --name ' '", ["calibrate", "fit", "--no-held-out", "--name", " ", "--out", out("c3.json")], 2,
         ["--name", "non-empty"], [out("c3.json")]),
        ("a value with a newline", ["show", "gb200\nnvl72"], 2, ["gb200\\nnvl72"], []),
        ("an option value with a newline", ["collective", "--system", "hgx-h100", "--op", "all\nreduce", "--gpus", "8",
         "--bytes", "1M"], 2, ["--op", "control character", "all\\nreduce"], []),
    ]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, args, status, words, absent in cases(tmp):
            r = run(args)
            problems = []
            if r is None:
                problems.append(f"no answer within {TIME_LIMIT_S} s")
            else:
                err = text(r.stderr)
                if r.returncode != status:
                    problems.append(f"exit status {r.returncode}, expected {status}: {err[-300:]!r}")
                if status == 2 and (len(err.splitlines()) != 1 or not err.endswith("\n")):
                    problems.append(f"stderr is {len(err.splitlines())} line(s), expected one: {err[:300]!r}")
                if status == 0 and "json" in args and "--format" in args:
                    try:
                        json.loads(r.stdout)
                    except ValueError as e:
                        problems.append(f"stdout is not JSON: {e}")
                for w in words:
                    if w not in err and w not in text(r.stdout):
                        problems.append(f"output lacks {w!r}: {err.strip()[:300]!r}")
                for path in absent:
                    if os.path.exists(path):
                        problems.append(f"{path} was left behind")
                leftovers = [f for f in os.listdir(tmp) if ".tmp-" in f]
                if leftovers:
                    problems.append(f"temporary files left: {leftovers}")
            print(("FAIL " if problems else "ok   ") + name)
            for p in problems:
                print("     " + p)
            failures += bool(problems)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
