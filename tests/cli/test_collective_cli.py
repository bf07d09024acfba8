#!/usr/bin/python3
"""racksim collective / sweep end to end: the JSON contract with values checked against closed forms,
determinism (byte-identical JSON twice), the trace file, the nccl-tests layout of sweep, and bad input
(exit 2 and exactly one stderr line; a rank on a failed tray is a valid request that cannot run: exit 1,
one line naming the tray)."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
GiB = 1 << 30
failures = []


def racksim(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def near(a, b, rel):
    return abs(a - b) <= rel * abs(b)


def collective(*args):
    run = racksim("collective", "--system", "gb200-nvl72", *args)
    if run.returncode != 0:
        raise SystemExit(f"racksim collective {' '.join(args)} failed: {run.stderr}")
    return run.stdout


def test_json_contract_and_values():
    out = collective("--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--algo", "ring", "--calibration", "none")
    j = json.loads(out)
    for key in ["system", "racks", "op", "algo", "gpus", "bytes", "time_us", "algbw_GBps", "busbw_GBps", "phases",
                "links", "calibration"]:
        check(key in j, f"JSON has {key!r}")
    check(j["system"] == "gb200-nvl72" and j["racks"] == 1 and j["op"] == "all_reduce" and j["algo"] == "ring",
          "JSON echoes system, racks, op, algo")
    check(j["gpus"] == 8 and j["bytes"] == GiB and j["calibration"] == "none", "JSON echoes gpus, bytes, calibration")
    # Ring on 8 GPUs of one NVL72, NCCL's Simple protocol at 1 GiB: its base latency once (8.4 us) and 2(n-1)
    # steps of S/n at 900 GB/s, each with NCCL's NVLink ring step latency (3.4 us, longer than the wire's
    # 0.47): NCCL 2.28 src/graph/tuning.cc baseLat / hwLat tables (models/nccl/nccl_constants.hpp).
    expected_us = 8.4 + 14 * (max(0.47, 3.4) + (GiB // 8) / 900e9 * 1e6)
    check(near(j["time_us"], expected_us, 1e-5), f"ring 8 time {j['time_us']} us = closed form {expected_us:.2f} us")
    check(near(j["algbw_GBps"], GiB / (j["time_us"] * 1e-6) / 1e9, 1e-5), "algbw = bytes / time")
    check(near(j["busbw_GBps"], j["algbw_GBps"] * 2 * 7 / 8, 1e-5), "busbw = algbw * 2(n-1)/n (nccl-tests)")
    check([p["name"] for p in j["phases"]] and all(p["time_us"] > 0 for p in j["phases"]), "phases with times")
    check(j["links"] and j["links"][0]["kind"] == "nvlink" and near(j["links"][0]["max_utilization"], 1.0, 1e-6),
          "NVLink ports fully used")


def test_determinism():
    args = ("--op", "all_reduce", "--gpus", "72", "--bytes", "256M", "--algo", "nvls")
    first, second = collective(*args), collective(*args)
    check(first == second, "byte-identical JSON on rerun (nvls, 72 GPUs)")
    args = ("--racks", "2", "--op", "all_reduce", "--gpus", "16", "--bytes", "64M", "--algo", "hierarchical",
            "--fail", "switch-tray:0", "--partition-mode", "adaptive-bandwidth")
    check(collective(*args) == collective(*args), "byte-identical JSON on rerun (hierarchical, 2 racks, failure)")


def test_failures_and_auto():
    ok = json.loads(collective("--op", "all_reduce", "--gpus", "72", "--bytes", "4G", "--algo", "ring",
                               "--calibration", "none"))
    bad = json.loads(collective("--op", "all_reduce", "--gpus", "72", "--bytes", "4G", "--algo", "ring",
                                "--calibration", "none", "--fail", "switch-tray:0",
                                "--partition-mode", "adaptive-bandwidth"))
    check(bad["failures"] == ["switch-tray:0"], "failures echoed")
    check(near(bad["time_us"] / ok["time_us"], 18 / 16, 0.01),
          f"switch tray down (adaptive-bandwidth): 4 GiB ring time x{bad['time_us'] / ok['time_us']:.4f} ~ 18/16")
    # NVIDIA's default full-bandwidth mode: the loss of a switch makes the partition UNHEALTHY (exit 1).
    run = racksim("collective", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "72", "--bytes", "4G",
                  "--fail", "switch-tray:0")
    check(run.returncode == 1 and "UNHEALTHY" in run.stderr, f"switch tray down (full-bandwidth): {run.stderr.strip()}")
    # A dead NIC: NCCL goes through a neighbour GPU's NIC (PXN), slower, not an error (ring inside each rack:
    # the NIC phase in full; with NVLS inside it hides under NCCL's NVLS rate).
    two = ("--racks", "2", "--op", "all_reduce", "--gpus", "144", "--bytes", "256M", "--algo", "hierarchical",
           "--inner", "ring", "--calibration", "none")
    healthy, pxn = json.loads(collective(*two)), json.loads(collective(*two, "--fail", "nic:0"))
    check(pxn["time_us"] > healthy["time_us"] and pxn["failures"] == ["nic:0"],
          f"NIC down: PXN {pxn['time_us']:.1f} us > healthy {healthy['time_us']:.1f} us")
    # --nvls off holds inside racksim's hierarchical too: its inner auto is the ring there (it ran NVLS)
    no_nvls = json.loads(collective("--racks", "2", "--op", "all_reduce", "--gpus", "144", "--bytes", "1G", "--algo",
                                    "hierarchical", "--nvls", "off", "--model", "analytic"))
    check("NCCL's ring inside one node" in no_nvls["algo_note"], f"hierarchical with --nvls off: {no_nvls['algo_note'][:120]}")
    auto = json.loads(collective("--op", "all_reduce", "--gpus", "72", "--bytes", "1G", "--calibration", "none"))
    check(auto["algo"] in ("nvls", "ring", "tree", "hierarchical") and auto["algo_note"], "auto reports its pick")


def test_trace():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        collective("--op", "all_reduce", "--gpus", "8", "--bytes", "1M", "--algo", "ring", "--trace", path)
        with open(path) as f:
            trace = json.load(f)
        names = [e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"]
        spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        check(sum(1 for n in names if n.startswith("r0.")) == 8, "trace: one track per GPU")
        check(sum(1 for n in names if n.startswith("link ")) == 8, "trace: one track per busy link")
        check(len(spans) >= 112, f"trace: {len(spans)} spans (112 ring tasks + link busy intervals)")


def test_sweep():
    run = racksim("sweep", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--algo", "nvls",
                  "--min-bytes", "1M", "--max-bytes", "8M")
    check(run.returncode == 0, "sweep runs")
    lines = run.stdout.splitlines()
    check("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
          in lines, "sweep prints nccl-tests' column header")
    rows = [l.split() for l in lines if l and not l.startswith("#")]
    check([int(r[0]) for r in rows] == [1 << 20, 2 << 20, 4 << 20, 8 << 20], "sweep sizes 1M..8M by 2")
    check(all(r[1] == str(int(r[0]) // 4) and r[2] == "float" and r[3] == "sum" and r[4] == "-1" for r in rows),
          "count, type, redop, root columns")
    check(all(len(r) == 13 for r in rows), "13 columns per row (out-of-place and in-place)")
    j = json.loads(racksim("sweep", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--algo", "nvls",
                           "--min-bytes", "1M", "--max-bytes", "8M", "--format", "json").stdout)
    check([r["bytes"] for r in j] == [1 << 20, 2 << 20, 4 << 20, 8 << 20], "sweep JSON: one object per size")
    check(all(float(r[5]) == round(o["time_us"], 2) for r, o in zip(rows, j) if float(r[5]) < 100),
          "sweep table and JSON agree")
    # nccl-tests' sizes on 72 ranks: whole floats per rank (1 KiB -> 864 B), the sizes with none named under the table
    ag = racksim("sweep", "--system", "gb200-nvl72", "--op", "all_gather", "--gpus", "72", "-b", "64", "-e", "2K",
                 "--model", "analytic")
    ag_rows = [l.split() for l in ag.stdout.splitlines() if l and not l.startswith("#")]
    check([(int(r[0]), int(r[1])) for r in ag_rows] == [(288, 1), (864, 3), (2016, 7)], f"all_gather sizes as nccl-tests: {ag_rows}")
    check("# Not run (no element per rank; nccl-tests prints them as 0-byte rows): 64 128 256" in ag.stdout.splitlines(),
          "the sizes left out are named")


def test_bad_input():
    base = ["collective", "--system", "gb200-nvl72", "--op", "all_reduce"]
    cases = [
        (base + ["--gpus", "8", "--bytes", "1M", "--algo", "warp"], ["--algo", "'warp'", "ring"]),
        (base + ["--racks", "2", "--gpus", "71", "--bytes", "1M"], ["--gpus", "71", "multiple of the 2 racks"]),
        (base + ["--racks", "1", "--gpus", "73", "--bytes", "1M"], ["--gpus", "73", "[1, 72]"]),
        # without --racks, 73 GPUs take 2 racks, which must hold the same number of ranks each
        (base + ["--gpus", "73", "--bytes", "1M"], ["--gpus", "73", "multiple of the 2 racks"]),
        (base + ["--gpus", "8", "--bytes", "0"], ["--bytes", "'0'", "1 TiB"]),
        (base + ["--gpus", "8", "--bytes", "2T"], ["--bytes", "'2T'", "1 TiB"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--fail", "tray:99"], ["--fail", "tray:99", "[0, 17]"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--fail", "warp:1"], ["--fail", "warp:1", "switch-tray:D.S"]),
        # issue 16: a vanishing fraction, a denormal and ids the system does not have were accepted.
        (base + ["--gpus", "8", "--bytes", "1M", "--fail", "link:r0.t0.gpu0-nic0@1e-300"], ["--fail", "[0.001, 1)"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--fail", "link:r0.t0.gpu0-nic0@4.9e-324"], ["--fail", "[0.001, 1)"]),
        (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1M", "--fail",
          "nic:143"], ["--fail", "nic:143", "[0, 7]"]),
        (["schedule", "dump", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "8", "--bytes", "1M",
          "--fail", "tray:99"], ["--fail", "tray:99", "[0, 17]"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--partition-mode", "user-action"], ["--partition-mode", "adaptive"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--partitions", "19x1"], ["--partitions", "19x1"]),
        # NCCL versions racksim does not price (before 2.18, the first with NVLS-tree), or no version at all.
        (base + ["--gpus", "8", "--bytes", "1M", "--nccl-version", "2.17.1"], ["--nccl-version", "2.17.1", "2.18"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--nccl-version", "latest"], ["--nccl-version", "latest", "2.18"]),
        # Queue pairs per InfiniBand / RoCE connection (NCCL_IB_QPS_PER_CONNECTION): 0 is NCCL's default, 1-128 allowed.
        (base + ["--gpus", "8", "--bytes", "1M", "--ib-qps-per-connection", "-1"], ["--ib-qps-per-connection", "-1", "1 to 128"]),
        (base + ["--gpus", "8", "--bytes", "1M", "--ib-qps-per-connection", "129"], ["--ib-qps-per-connection", "129", "1 to 128"]),
        (["sweep", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "8", "--min-bytes", "1G",
          "--max-bytes", "1M"], ["--min-bytes", "--max-bytes"]),
    ]
    for args, words in cases:
        run = racksim(*args)
        one_line = len(run.stderr.splitlines()) == 1
        check(run.returncode == 2 and not run.stdout and one_line and all(w in run.stderr for w in words),
              f"bad input {' '.join(args[5:])}: exit 2, one line: {run.stderr.strip()}")
    # A failed tray inside the group is valid input that cannot run: exit 1, one line naming the tray.
    run = racksim(*base, "--gpus", "8", "--bytes", "1M", "--fail", "tray:1")
    check(run.returncode == 1 and not run.stdout and len(run.stderr.splitlines()) == 1
          and "compute tray 1" in run.stderr, f"failed tray in the group: exit 1, one line: {run.stderr.strip()}")


def test_queue_pairs():
    """NCCL_IB_QPS_PER_CONNECTION: four H100 nodes on NVLS-tree at NCCL's one queue pair are bound by their NICs'
    16 channels x 0.386 x 50 GB/s = 309 GB/s each way (a double binary tree carries 2 S a node), so 8 GiB takes
    2 x 8 GiB / 309 GB/s at least; with two queue pairs the NICs' own rate binds instead, faster."""
    def run(*extra):
        out = racksim("collective", "--system", "hgx-h100", "--racks", "4", "--gpus", "32", "--op", "all_reduce",
                      "--bytes", "8G", "--format", "json", *extra)
        check(out.returncode == 0, "collective hgx-h100 x4 " + " ".join(extra) + ": exit 0")
        return json.loads(out.stdout)
    one, two = run(), run("--ib-qps-per-connection", "2")
    rate = 16 * 0.3863 * 50e9
    check(near(one["time_us"] * 1e-6, 2 * 8 * GiB / rate, 0.02) and "1 queue pair(s)" in one["algo_note"],
          f"one queue pair: {one['time_us']:.0f} us ~ 2 x 8 GiB / 309 GB/s = {2 * 8 * GiB / rate * 1e6:.0f} us, named in the note")
    check(two["busbw_GBps"] > 1.15 * one["busbw_GBps"] and "queue pair" not in two["algo_note"],
          f"two queue pairs: {two['busbw_GBps']:.0f} GB/s > 1.15 x {one['busbw_GBps']:.0f}, the NICs' rate binds")


def test_older_nccl_takes_the_nearest_tables():
    """NCCL 2.18-2.24 have no tables of their own: 2.27's, the nearest (as --nccl-version 2.26 names them), with a
    warning that says how near. Four H100 nodes at 8 MiB: Voltage Park's run with 2.24.3 measured 230 us there."""
    def run(version, fmt="json"):
        out = racksim("collective", "--system", "hgx-h100", "--racks", "4", "--gpus", "32", "--op", "all_reduce",
                      "--bytes", "8M", "--model", "analytic", "--format", fmt, "--nccl-version", version)
        check(out.returncode == 0, f"--nccl-version {version}: exit 0 ({out.stderr.strip()})")
        return out.stdout
    old, near_ = json.loads(run("2.24.3")), json.loads(run("2.26"))
    check((old["algo"], old["protocol"], old["time_us"]) == (near_["algo"], near_["protocol"], near_["time_us"]),
          f"2.24.3 priced as 2.26: {old['algo']}/{old['protocol']} {old['time_us']} us")
    check(len(old["warnings"]) == len(near_["warnings"]) + 1 and "NCCL 2.24 is older than racksim's tuner tables" in
          old["warnings"][0] and "same Hopper latencies and caps" in old["warnings"][0], "2.24.3: the warning says how near")
    check("Tree/Simple at 28 us per NVLink step" in " ".join(json.loads(run("2.20.5"))["warnings"]),
          "2.20.5: the warning names what differs")
    check("warning: NCCL 2.24 is older" in run("2.24.3", "table"), "the table prints the warning")


def test_launch_across_domains_is_named():
    """The fitted launch across domains is per 8 GPUs of each domain (per hop for the tree): two 64-GPU GB300 racks
    pay 8 units, two 8-GPU B200 nodes one; the note names the figure, the count and the entry, and the time holds it."""
    source = os.environ.get("RACKSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(source, "calibrate", "default.json")) as f:
        per8 = json.load(f)["algorithms"]["blackwell:all_reduce/nvls_tree"]["scale_out_launch_us_per_8_gpus"]
    def run(system, racks, gpus):
        out = racksim("collective", "--system", system, "--racks", str(racks), "--gpus", str(gpus), "--op", "all_reduce",
                      "--bytes", "1M", "--algo", "nvls_tree", "--model", "analytic", "--format", "json")
        check(out.returncode == 0, f"{system} x{racks}: exit 0 ({out.stderr.strip()})")
        return json.loads(out.stdout)
    rack, node = run("gb300-nvl72", 2, 128), run("hgx-b200", 2, 16)
    for j, units in ((rack, 8), (node, 1)):
        said = f"a fitted launch across domains of {per8 * units:.4g} us ({per8:.4g} us per 8 GPUs of each domain x {units}"
        check(said in j["algo_note"], f"{j['system']}: the note says '{said}'")
        check(j["time_us"] > per8 * units, f"{j['system']}: {j['time_us']:.1f} us holds the launch {per8 * units:.1f}")
    check(rack["time_us"] - node["time_us"] > 6 * per8, "the rack pays 7 units more than the node (less its faster links)")


def test_gpus_alone_take_the_racks_they_need():
    """Without --racks, a --gpus count the default racks cannot hold takes the fewest that hold it (whole NVLink
    domains), N/R ranks each; with --racks the count is what the racks have."""
    for system, gpus, racks in (("gb200-nvl72", 144, 2), ("gb200-nvl72", 576, 8), ("hgx-h100", 64, 8), ("gb200-nvl72", 72, 1)):
        out = racksim("collective", "--system", system, "--gpus", str(gpus), "--op", "all_reduce", "--bytes", "1G",
                      "--model", "analytic", "--format", "json")
        check(out.returncode == 0, f"{system} --gpus {gpus}: exit 0 ({out.stderr.strip()})")
        if out.returncode == 0:
            j = json.loads(out.stdout)
            check(j["racks"] == racks and j["gpus"] == gpus, f"{system} --gpus {gpus}: {j['racks']} racks (expected {racks})")
            same = racksim("collective", "--system", system, "--racks", str(racks), "--gpus", str(gpus), "--op", "all_reduce",
                           "--bytes", "1G", "--model", "analytic", "--format", "json")
            check(same.stdout == out.stdout, f"{system} --gpus {gpus}: the same JSON as --racks {racks}")


def test_one_rank_is_a_copy_within_the_gpu():
    """One rank: NCCL exchanges nothing; out of place it copies the buffer within the GPU (ncclLaunchOneRank), which
    is what racksim prices, every op alike, at the calibration's HBM entry on the topology's HBM bandwidth (H100
    3350 GB/s); the sweep's in-place columns say NCCL launches nothing there."""
    cal = json.load(open(os.path.join(os.environ["RACKSIM_SOURCE_DIR"], "calibrate", "default.json")))["memory"]["hbm"]
    expected_us = cal["extra_latency_us"] + 2 * GiB / (cal["bandwidth_efficiency"] * 3350e9) * 1e6
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"):
        for model in ("engine", "analytic"):
            run = racksim("collective", "--system", "hgx-h100", "--gpus", "1", "--op", op, "--bytes", "1G", "--model", model)
            j = json.loads(run.stdout) if run.returncode == 0 else {}
            check(near(j.get("time_us", 0), expected_us, 1e-5),
                  f"one rank {op} ({model}): {j.get('time_us')} us = copy {expected_us:.2f} us")
    none = json.loads(racksim("collective", "--system", "hgx-h100", "--gpus", "1", "--op", "broadcast", "--bytes", "1G",
                              "--calibration", "none").stdout)
    check(near(none["time_us"], 2 * GiB / 3350e9 * 1e6, 1e-5), f"uncalibrated: 2 S / HBM ({none['time_us']} us)")
    check("in place NCCL launches nothing" in none["algo_note"], "the note says what in place costs")
    shipped = json.loads(racksim("collective", "--system", "hgx-h100", "--gpus", "1", "--op", "all_reduce", "--bytes", "1G").stdout)
    check(shipped["heldout_error"] is None, "no collective class's held-out error is quoted for a copy")
    table = racksim("sweep", "--system", "hgx-h100", "--gpus", "1", "--op", "all_gather", "--min-bytes", "1M",
                    "--max-bytes", "1M").stdout
    row = [line.split() for line in table.splitlines() if line.strip().startswith("1048576")]
    check(len(row) == 1 and row[0][9:12] == ["0.00", "N/A", "N/A"], f"sweep: in place 0 us, bandwidths N/A ({row})")


def test_a100_runs_nccls_ampere_path():
    """HGX A100: NVLink 3 at NCCL's SM80 figure (12 links x 20 GB/s, topo.h:18), no NVLS (NVSwitch gen2 has no
    multicast; NCCL's NVLS needs sm90), so auto runs a ring: Azure's ND A100 v4 measured 231.58 GB/s of bus bandwidth
    at 8 GB (calibrate/data/public_collectives.md), within 3 %. Its ring all-reduce has an Ampere fit of its own; the
    other ops take Hopper's terms and say so."""
    run = racksim("collective", "--system", "hgx-a100", "--gpus", "8", "--op", "all_reduce", "--bytes", "8G")
    j = json.loads(run.stdout) if run.returncode == 0 else {}
    check(j.get("algo") == "ring", f"A100 auto: ring ({j.get('algo')})")
    check(near(j.get("busbw_GBps", 0), 231.58, 0.03), f"A100 8-GPU busbw {j.get('busbw_GBps')} GB/s = Azure's 231.58 within 3 %")
    check(j.get("warnings") == [], f"its ring has Ampere's own fit: no warning ({j.get('warnings')})")
    ag = json.loads(racksim("collective", "--system", "hgx-a100", "--gpus", "8", "--op", "all_gather", "--bytes", "8G").stdout)
    check(any("no ampere calibration, using hopper's" in w for w in ag.get("warnings", [])), "all_gather's borrowed terms are named")
    nvls = racksim("collective", "--system", "hgx-a100", "--gpus", "8", "--op", "all_reduce", "--bytes", "8G", "--algo", "nvls")
    check(nvls.returncode == 2 and "cannot reduce" in nvls.stderr and nvls.stderr.count("\n") == 1,
          f"A100 --algo nvls refused in one line ({nvls.stderr.strip()[:80]})")


for test in [test_json_contract_and_values, test_determinism, test_failures_and_auto, test_trace, test_sweep,
             test_bad_input, test_queue_pairs, test_older_nccl_takes_the_nearest_tables, test_launch_across_domains_is_named,
             test_gpus_alone_take_the_racks_they_need, test_one_rank_is_a_copy_within_the_gpu,
             test_a100_runs_nccls_ampere_path]:
    test()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
