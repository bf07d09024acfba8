"""Properties of every collective over random systems and requests (issue 16), through the public API only
(the Python bindings and `racksim schedule dump|run`), so they hold whatever the algorithms' insides:

* conservation: at vendor peaks, the bytes the engine puts on NVLink ports equal the schedule's
  transfers counted once per GPU port they cross (a sender's port up, each receiver's port down);
* bandwidth bound: no collective beats the data it must move through one GPU's port (all_reduce,
  broadcast, reduce, send_recv: S; the others: (n-1)/n x S) at the port's per-direction bandwidth;
* monotonicity: for a fixed algorithm, more bytes never take less time;
* symmetry: relabelling the ranks of a schedule over a symmetric switch does not change its time;
* determinism: the same request gives byte-identical JSON, run twice, with jobs=1 or 3.

Cases come from a seeded generator (the seed is in every failure message): a failure is reproducible."""
import json
import os
import random
import subprocess

import pytest

import racksim

BIN = os.environ["RACKSIM_BIN"]
SEED = 16
SYSTEMS = ["hgx-h100", "hgx-h200", "hgx-b200", "gb200-nvl72", "gb300-nvl72"]
OPS = {  # op -> algorithms with a single NVLink domain; (n-1)/n factor of the bandwidth bound
    "all_reduce": (["ring", "nvls", "tree"], False),
    "all_gather": (["ring", "nvls"], True),
    "reduce_scatter": (["ring", "nvls"], True),
    "all_to_all": (["direct"], True),
    "broadcast": (["ring"], False),
    "reduce": (["ring"], False),
    "send_recv": (["ring"], False),
}


def cases(count, seed=SEED):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        system = rng.choice(SYSTEMS)
        gpus_max = 8 if system.startswith("hgx") else 24
        op = rng.choice(sorted(OPS))
        algo = rng.choice(OPS[op][0])
        gpus = rng.randint(2, gpus_max)
        size = rng.choice([1, 3]) << rng.randint(12, 27)  # 4 KiB .. 384 MiB
        size -= size % (gpus * 4)  # whole float elements per rank, as nccl-tests sizes are
        out.append((f"seed {seed} case {i}", system, op, algo, gpus, max(size, gpus * 4)))
    return out


@pytest.fixture(scope="module")
def systems():
    return {s: racksim.load(s) for s in SYSTEMS}


def port_Bps(sim):
    route = sim.route("gpu0", "gpu1")
    return route["bottleneck_GBps"] * 1e9


def dump(system, op, algo, gpus, size, tmp_path, name):
    path = tmp_path / name
    r = subprocess.run([BIN, "schedule", "dump", "--system", system, "--op", op, "--algo", algo, "--gpus", str(gpus),
                        "--bytes", str(size), "--calibration", "none", "--out", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text()), path


@pytest.mark.parametrize("case", cases(24), ids=lambda c: c[0])
def test_conservation_and_bandwidth_bound(case, systems, tmp_path):
    label, system, op, algo, gpus, size = case
    sim = systems[system]
    result = sim.collective(op, gpus, size, algo=algo, calibration="none")
    schedule, _ = dump(system, op, algo, gpus, size, tmp_path, "s.json")
    crossings = 0
    for t in schedule["tasks"]:
        ends = [t["src"]] + t["dsts"]
        crossings += t["bytes"] * sum(1 for e in ends if e.startswith("rank:"))
    nvlink = sum(l["bytes"] for l in result["links"] if l["kind"] == "nvlink")
    assert nvlink == crossings, f"{label}: {system} {op}/{algo} n={gpus} S={size}: engine {nvlink} B on NVLink ports, " \
                                f"schedule {crossings} B of port crossings"
    fraction = (gpus - 1) / gpus if OPS[op][1] else 1.0
    bound_us = fraction * size / port_Bps(sim) * 1e6
    assert result["time_us"] >= bound_us * (1 - 1e-6), f"{label}: {system} {op}/{algo} n={gpus} S={size}: " \
                                                       f"{result['time_us']} us beats the bandwidth bound {bound_us} us"


@pytest.mark.parametrize("case", cases(8, seed=SEED + 1), ids=lambda c: c[0])
def test_more_bytes_never_take_less_time(case, systems):
    label, system, op, algo, gpus, _ = case
    sweep = systems[system].sweep(op, gpus, 4 * gpus, "256M", step_factor=4, algo=algo, calibration="default")
    times = list(sweep["time_us"])
    for (b0, t0), (b1, t1) in zip(zip(sweep["bytes"], times), zip(sweep["bytes"][1:], times[1:])):
        assert t1 >= t0, f"{label}: {system} {op}/{algo} n={gpus}: {b1} B in {t1} us < {b0} B in {t0} us"


@pytest.mark.parametrize("case", cases(6, seed=SEED + 2), ids=lambda c: c[0])
def test_relabelled_ranks_take_the_same_time(case, tmp_path):
    label, system, op, algo, gpus, size = case
    schedule, path = dump(system, op, algo, gpus, size, tmp_path, "s.json")
    perm = list(schedule["request"]["gpus"])
    random.Random(label).shuffle(perm)
    schedule["request"]["gpus"] = perm
    relabelled = tmp_path / "r.json"
    relabelled.write_text(json.dumps(schedule))
    times = []
    for p in (path, relabelled):
        r = subprocess.run([BIN, "schedule", "run", str(p), "--system", system, "--calibration", "none"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        times.append(json.loads(r.stdout)["time_us"])
    assert times[0] == pytest.approx(times[1], rel=1e-9), f"{label}: {system} {op}/{algo} ranks {perm}: {times}"


def test_byte_identical_runs_and_jobs(systems):
    sim = systems["gb200-nvl72"]
    a = json.dumps(sim.collective("all_reduce", 72, "64M"), sort_keys=True)
    b = json.dumps(sim.collective("all_reduce", 72, "64M"), sort_keys=True)
    assert a == b
    s1 = sim.sweep("all_gather", 16, "1K", "16M", step_factor=8, jobs=1).to_json()
    s3 = sim.sweep("all_gather", 16, "1K", "16M", step_factor=8, jobs=3).to_json()
    assert s1 == s3
    cli = [BIN, "sweep", "--system", "hgx-b200", "--op", "reduce_scatter", "--gpus", "8", "-b", "1K", "-e", "64M",
           "--format", "json"]
    outs = {subprocess.run(cli + ["--jobs", j], capture_output=True, text=True).stdout for j in ("1", "2", "3")}
    assert len(outs) == 1 and next(iter(outs)).startswith("[")
