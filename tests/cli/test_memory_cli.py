#!/usr/bin/python3
"""racksim place / offload / imex-check through the CLI: the JSON contract with values worked out here,
byte-identical output on a second run, text output, and bad input (exit 2, one line on stderr naming
the option, nothing on stdout)."""
import json
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
GB = 10**9
HBM = 189471 << 20  # a GB200 GPU's HBM as the driver reports it (topologies/gb200-nvl72.json; issue 16)
failures = []


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def check(cond, what):
    if not cond:
        failures.append(what)


def place_json(*args):
    r = run("place", "--format", "json", *args)
    check(r.returncode == 0, f"place {args}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout), r.stdout


SCENARIO = ["--alloc", "train0:cuda:100GB:gpu0", "--alloc", "train1:cuda:100GB:gpu1", "--alloc", "prep:cpu:1100GB",
            "--alloc", "next:cuda:40GB:gpu0"]


def test_place_self_check_1():
    numa, text1 = place_json("--system", "gb200-nvl72", "--mode", "numa", *SCENARIO)
    _, text2 = place_json("--system", "gb200-nvl72", "--mode", "numa", *SCENARIO)
    check(text1 == text2, "place JSON differs between two identical runs")
    nodes = {n["id"]: n for n in numa["nodes"]}
    check([n["id"] for n in numa["nodes"]] == ["cpu0", "cpu1", "gpu0", "gpu1", "gpu2", "gpu3"], "node ids")
    for n in numa["nodes"]:
        for key in ("id", "kind", "capacity_bytes", "used_bytes"):
            check(key in n, f"node lacks {key}")
    check(nodes["cpu0"]["capacity_bytes"] == 480 * GB and nodes["gpu0"]["capacity_bytes"] == HBM, "capacities")
    allocs = {a["name"]: a for a in numa["allocations"]}
    for a in numa["allocations"]:
        for key in ("name", "requested_bytes", "placed", "failed", "reason"):
            check(key in a, f"allocation lacks {key}")
    # min_free = 165581 kB split by size (see tests/unit/memory/test_selfcheck1.cpp); OS reserve 8 GB.
    min_free = 165581 * 1024
    kernel = 960 * GB + 4 * HBM
    wm_grace, wm_gpu = min_free * 480 * GB // kernel, min_free * HBM // kernel
    grace = 480 * GB - 8 * GB - wm_grace
    prep = allocs["prep"]
    check(prep["placed"].get("cpu0") == grace and prep["placed"].get("cpu1") == grace, f"prep on Grace: {prep['placed']}")
    check(prep["placed"].get("gpu0") == HBM - 100 * GB - wm_gpu, f"prep on gpu0: {prep['placed']}")
    check(prep["spilled_to_gpu_bytes"] == 1100 * GB - 2 * grace, "spill")
    check(prep["failed"] is False, "prep fails in NUMA mode")
    nxt = allocs["next"]
    check(nxt["failed"] is True and "cudaErrorMemoryAllocation" in nxt["reason"], f"next: {nxt}")
    check(nodes["gpu0"]["nvidia_smi_used_bytes"] == 100 * GB and nodes["gpu0"]["nvidia_smi_free_bytes"] == HBM - 100 * GB,
          "nvidia-smi view of gpu0")
    check(numa["kubernetes"] == {"node_capacity_bytes": kernel, "hbm_counted": True, "pod_usage_bytes": 1300 * GB},
          f"kubernetes NUMA: {numa['kubernetes']}")
    check(allocs["train0"]["init_on_alloc_zeroing_s"] == 5.0, "init_on_alloc zeroing of 100 GB at 20 GB/s")

    cdmm, _ = place_json("--system", "gb200-nvl72", "--mode", "cdmm", *SCENARIO)
    allocs = {a["name"]: a for a in cdmm["allocations"]}
    check(allocs["prep"]["outcome"] == "oom_killed", f"CDMM prep: {allocs['prep']['outcome']}")
    check(allocs["prep"]["spilled_to_gpu_bytes"] == 0, "CDMM spill")
    check(allocs["next"]["failed"] is False, "CDMM next cudaMalloc fails")
    nodes = {n["id"]: n for n in cdmm["nodes"]}
    check(nodes["gpu0"]["kernel_visible"] is False and nodes["gpu0"]["kernel_pages_bytes"] == 0, "CDMM gpu0")
    check(cdmm["kubernetes"]["node_capacity_bytes"] == 960 * GB and not cdmm["kubernetes"]["hbm_counted"], "kubernetes CDMM")


def test_place_text_and_options():
    r = run("place", "--system", "gb200-nvl72", "--mode", "numa", "--tuning", "guide", "--alloc", "x:cpu:10GB:bind=gpu1",
            "--reader", "gpu1")
    check(r.returncode == 0, f"place text: {r.stderr}")
    check("gpu1 reads 10.0 GB on gpu1: local HBM" in r.stdout, "reader access line")
    check("[ ok ] init_on_alloc=0" in r.stdout, "guide tuning passes init_on_alloc")
    j, _ = place_json("--system", "gb200-nvl72", "--page-size", "64K", "--thp", "always", "--alloc", "y:cpu:1GB")
    check(j["min_free_bytes"] == 7 * 11 * 512 * 2**20, f"64K + THP reserve: {j['min_free_bytes']}")
    j, _ = place_json("--system", "gb200-nvl72", "--mode", "numa", "--swap", "200GB", *SCENARIO)
    nxt = [a for a in j["allocations"] if a["name"] == "next"][0]
    check(not nxt["failed"] and nxt["reclaimed_bytes"] == 40 * GB, "swap lets the kernel reclaim spilled pages")


def test_offload():
    r = run("offload", "--system", "gb200-nvl72", "--params", "70B", "--offload", "optimizer", "--format", "json")
    check(r.returncode == 0, f"offload: {r.stderr}")
    c2c = json.loads(r.stdout)
    check(c2c["bytes"]["optimizer"] == 840e9 and c2c["fits_host"], "70B Adam states 840 GB fit in the tray's LPDDR")
    check(abs(c2c["step_s"] - 840 / 450) < 1e-5, f"C2C step {c2c['step_s']}")
    r = run("offload", "--system", "gb200-nvl72", "--params", "70B", "--link", "pcie4", "--compute-time", "5", "--format", "json")
    gen4 = json.loads(r.stdout)
    pcie4 = 16e9 * 16 * 128 / 130 / 8
    check(abs(gen4["step_s"] - 840e9 / pcie4) < 1e-3 and gen4["step_s"] > 20, f"PCIe Gen4 step {gen4['step_s']}")
    check(gen4["hidden"] is False and abs(gen4["exposed_s"] - (840e9 / pcie4 - 5)) < 1e-3, "PCIe Gen4 not hidden")
    r = run("offload", "--system", "gb300-nvl72", "--params", "70B", "--format", "json")
    gb300 = json.loads(r.stdout)
    check(gb300["fits_hbm"] and not c2c["fits_hbm"], "GB300 keeps 280 GB in HBM, GB200 does not")
    r = run("offload", "--system", "gb200-nvl72", "--params", "70B", "--gpus", "4")
    check(r.returncode == 0 and "bottleneck: LPDDR5X" in r.stdout, "4-GPU offload text")


def test_imex_check():
    r = run("imex-check", "--system", "gb200-nvl72", "--trays", "0-3", "--container-channels", "none", "--format", "json")
    # exit 1: the job cannot get past NCCL init (issue 16: a script can use imex-check as a check), the
    # report still on stdout and one line on stderr saying why
    check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "cannot start (init_error)" in r.stderr,
          f"imex-check: {r.returncode} {r.stderr}")
    j = json.loads(r.stdout)
    check(j["outcome"] == "init_error" and j["failed_checks"] == ["IMEX channel"], f"self-check 5: {j['outcome']}")
    check(len(j["gpus"]) == 16 and j["gpus"][0]["state"] == "Completed" and j["gpus"][0]["clique_id"] == 1, "fabric info")
    r = run("imex-check", "--system", "gb200-nvl72", "--trays", "0-3", "--container-channels", "none", "--nccl-mnnvl-enable", "0",
            "--calibration", "none", "--format", "json")
    check(r.returncode == 0, f"ib_forced runs: exit {r.returncode}")
    j = json.loads(r.stdout)
    s = 2**30
    check(j["outcome"] == "ib_forced" and j["runs"], "MNNVL disabled runs over IB")
    expect_ib = 2 * 3 / 4 * s / 900e9 + 2 * 3 / 4 * (s / 4) / 50e9
    est = j["estimate"]
    check(abs(est["bandwidth_only_ib_s"] - expect_ib) / expect_ib < 1e-5, f"bandwidth-only IB estimate {est}")
    # Without MNNVL NCCL runs rings across the 4 trays, one per NIC (4 per tray): within 10 % of
    # 2 x 15/16 x S / (4 x 50 GB/s), never below the hierarchical bandwidth bound.
    nic_rings = 2 * 15 / 16 * s / (4 * 50e9)
    check(abs(est["ib_allreduce_s"] / nic_rings - 1) < 0.1 and est["ib_allreduce_s"] >= expect_ib
          and est["ib_algorithm"] in ("ring", "tree"), f"analytic IB {est}")
    check(est["nvlink_allreduce_s"] < 0.25 * est["ib_allreduce_s"], f"MNNVL vs IB {est}")
    r = run("imex-check", "--system", "gb200-nvl72", "--trays", "0", "--container-channels", "none")
    check(r.returncode == 0 and "=> single_tray" in r.stdout, "single tray text")
    r = run("imex-check", "--system", "gb200-nvl72", "--trays", "0-1", "--share", "0:5:fd")
    check("FAILS: an fd only means something" in r.stdout, "fd across trays")


BAD = [
    (["place", "--system", "gb200-nvl72", "--alloc", "a:gpu:1GB"], ["--alloc", "'gpu'", "KIND cpu"]),
    (["place", "--system", "gb200-nvl72", "--alloc", "a:cpu:-5GB"], ["--alloc", "'-5GB'", "negative"]),
    (["place", "--system", "gb200-nvl72", "--alloc", "a:cuda:1GB:gpu9"], ["--alloc", "'gpu9'", "gpu3"]),
    (["place", "--system", "gb200-nvl72", "--alloc", "a:cuda:1GB:interleave=gpu0,gpu1"], ["--alloc", "cuda takes a GPU"]),
    (["place", "--system", "gb200-nvl72", "--alloc", "a:pinned:1GB:gpu0"], ["--alloc", "takes a CPU node"]),
    (["place", "--system", "gb200-nvl72", "--mode", "hmm"], ["--mode", "'hmm'", "numa or cdmm"]),
    (["place", "--system", "gb200-nvl72", "--page-size", "8K"], ["--page-size", "4K or 64K"]),
    (["place", "--system", "gb200-nvl72", "--reader", "gpu8"], ["--reader", "'gpu8'"]),
    (["offload", "--system", "gb200-nvl72", "--params", "70Q"], ["--params", "'70Q'"]),
    (["offload", "--system", "gb200-nvl72", "--params", "70B", "--offload", "cache"], ["--offload", "'cache'"]),
    (["offload", "--system", "gb200-nvl72", "--params", "70B", "--gpus", "5"], ["--gpus", "'5'", "1..4"]),
    (["offload", "--system", "gb200-nvl72", "--params", "70B", "--link", "nvlink"], ["--link", "'nvlink'"]),
    (["imex-check", "--system", "gb200-nvl72", "--trays", "18"], ["--trays", "'18'", "0..17"]),
    (["imex-check", "--system", "gb200-nvl72"], ["--trays/--gpus"]),
    (["imex-check", "--system", "gb200-nvl72", "--trays", "0-1", "--fabric-state", "3:broken"], ["--fabric-state", "'broken'"]),
    (["imex-check", "--system", "gb200-nvl72", "--trays", "0-1", "--partition", "0-9", "--partition", "9-17"],
     ["--partition", "each tray in at most one partition"]),
    (["imex-check", "--system", "gb200-nvl72", "--trays", "0-1", "--nccl-version", "two"], ["--nccl-version", "'two'"]),
]


def test_bad_input():
    for args, words in BAD:
        r = run(*args)
        lines = r.stderr.strip().splitlines()
        ok = r.returncode == 2 and len(lines) == 1 and r.stdout == "" and all(w in r.stderr for w in words)
        check(ok, f"{args}: exit {r.returncode}, stderr {r.stderr!r}, want {words}")


for test in (test_place_self_check_1, test_place_text_and_options, test_offload, test_imex_check, test_bad_input):
    try:
        test()
    except Exception as e:  # a crash in one test is a failure, the others still run
        failures.append(f"{test.__name__}: {type(e).__name__}: {e}")

for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
