#!/usr/bin/python3
"""racksim jobs and racksim goodput from the command line: the operator scenario of issue 13 in both partition
modes (scenarios/operator-tray7.json), a NIC failure that restarts through PXN instead of failing, goodput's
determinism and comparison, and bad input exiting 2 with one line on stderr."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))  # 4 in the sanitizer build (tests/CMakeLists.txt)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def racksim(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300 * TIMEOUT_SCALE)


scenario = os.path.join(SOURCE, "scenarios", "operator-tray7.json")
for mode in ("full-bandwidth", "adaptive-bandwidth"):
    run = racksim("jobs", scenario, "--partition-mode", mode, "--format", "json")
    check(run.returncode == 0, f"jobs {mode}: exit {run.returncode} {run.stderr.strip()}")
    r = json.loads(run.stdout)
    fates = {j["name"]: j for j in r["failure"]["jobs"]}
    check(fates["a32"]["fate"] == "dies" and fates["a32"]["back_after_s"] > 0, f"{mode}: the job on trays 0-7 dies")
    check(fates["b32"]["fate"] == "continues" and fates["big72"]["fate"] == "continues", f"{mode}: the others continue")
    check(all(j["slowdown"] == 0 for j in r["jobs"]) and fates["b32"]["slowdown_after"] == 0,
          f"{mode}: survivors do not slow each other (only the NVLink crossbar is shared)")
    check(r["failure"]["partition_mode"] == mode, f"{mode}: mode echoed")

table = racksim("jobs", "operator-tray7").stdout  # a shipped scenario by id
check("a32" in table and "dies" in table and "continues" in table, "jobs table names the fates")
again = racksim("jobs", scenario, "--format", "json").stdout
check(again == racksim("jobs", scenario, "--format", "json").stdout, "jobs JSON byte-identical on rerun")

shared = racksim("jobs", os.path.join(SOURCE, "scenarios", "shared-fabric.json"), "--fail", "nic:0", "--format", "json")
check(shared.returncode == 0, f"shared-fabric scenario runs: {shared.stderr.strip()}")
s = json.loads(shared.stdout)
check(all(j["slowdown"] > 0.2 for j in s["jobs"]), "jobs on a 2:1 oversubscribed fabric slow each other down")
check(len(s["shared_links"]) == 8 and all(l["kind"] == "ib" for l in s["shared_links"]), "they fight over the 8 leaf uplinks")
x = {j["name"]: j for j in s["failure"]["jobs"]}["x"]
check(x["fate"] == "restarts" and x["slowdown_after"] > 0 and "PXN" in x["reason"],
      f"a dead NIC: restart through PXN, slower ({x['slowdown_after']:+.3f}), not an error")

# A planner step as a job through the CLI (its engine runs in the daemon, which re-reads the calibration: the
# step's compute once went there as a calibration entry it refused, and the command failed).
steps = racksim("jobs", "planner-steps", "--format", "json")
check(steps.returncode == 0, f"jobs planner-steps: exit {steps.returncode} {steps.stderr.strip()[:300]}")
if steps.returncode == 0:
    for j in json.loads(steps.stdout)["jobs"]:
        delay = j["collectives"][0]
        check(delay["algo"] == "delay" and abs(delay["alone_us"] - j["step"]["compute_us"]) <= 1e-6 * j["step"]["compute_us"],
              f"planner-steps {j['name']}: the compute delay is the planner's step less its DP traffic")

gp = ["goodput", "--gpus", "4608", "--step-s", "10", "--checkpoint-bytes", "5700GB", "--spare-trays", "2", "--trials", "100"]
a, b = racksim(*gp, "--format", "json"), racksim(*gp, "--format", "json")
check(a.returncode == 0 and a.stdout == b.stdout, "goodput: the same seed gives byte-identical JSON")
check(a.stdout != racksim(*gp, "--format", "json", "--seed", "2").stdout, "goodput: another seed, other numbers")
g = json.loads(a.stdout)[0]
check(0 < g["mc_goodput"] <= 1 and g["p5"] <= g["p50"] <= g["p95"], "goodput in (0, 1], percentiles ordered")
check(g["rates"]["gpu"]["source"].startswith("llama3-table5") and "assumption" in g["rates"]["nvlink_switch"]["source"],
      "rates name their source or say assumption")
cmp = json.loads(racksim(*gp, "--compare", "--format", "json").stdout)
check([c["label"].split()[0] for c in cmp] == ["gb200-nvl72", "gb200-nvl72", "hgx-b200"], "--compare: racks, partitions, HGX")
check(len({c["idle_gpus"] for c in cmp}) == 1, "--compare holds the same idle GPUs in spares for each")

with tempfile.TemporaryDirectory() as tmp:
    bad_key = os.path.join(tmp, "bad.json")
    with open(bad_key, "w") as f:
        json.dump({"schema_version": 1, "system": "gb200-nvl72", "jobz": []}, f)
    cases = [
        (["jobs", os.path.join(tmp, "missing.json")], ["missing.json"]),
        (["jobs", "operator-tray8"], ["operator-tray8", "operator-tray7"]),
        (["jobs", bad_key], ["jobz"]),
        (["jobs", scenario, "--fail", "tray:99"], ["tray:99", "[0, 35]"]),
        (["jobs", scenario, "--partition-mode", "user"], ["--partition-mode"]),
        (["goodput", "--gpus", "64", "--step-s", "1", "--checkpoint-bytes", "1G", "--unit", "partition:7"], ["partition:7"]),
        (["goodput", "--gpus", "64", "--step-s", "1", "--checkpoint-bytes", "1G", "--spare-trays", "18"], ["--spare-trays"]),
        (["goodput", "--gpus", "64", "--checkpoint-bytes", "1G"], ["--step-s"]),
        (["goodput", "--gpus", "64", "--step-s", "1", "--checkpoint-bytes", "1G", "--trials", "1"], ["--trials"]),
        (["goodput", "--gpus", "64", "--step-s", "1", "--checkpoint-bytes", "1G", "--system", "hgx-b200",
          "--unit", "node", "--spare-trays", "1"], ["--spare-trays"]),
    ]
    for args, words in cases:
        run = racksim(*args)
        one_line = len(run.stderr.splitlines()) == 1
        check(run.returncode == 2 and one_line and all(w in run.stderr for w in words),
              f"bad input {' '.join(args[:4])}...: exit 2, one line: {run.stderr.strip()}")

sys.exit(1 if failures else 0)
