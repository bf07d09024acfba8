#!/usr/bin/python3
"""`racksim fig4` (the course's Fig 4 model, seed course section 7) against its closed form, its sweep form
against single sizes, and `collective --nic-GBps` (the page's NIC slider): the topology's own NIC speed gives
byte-identical JSON, a slower NIC a slower cross-rack all-reduce; bad values exit 2 with one line."""
import json
import os
import subprocess
import sys

BIN = os.environ["RACKSIM_BIN"]
S = 1 << 30
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args):
    r = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def fig4(*args):
    code, out, err = run(["fig4", *args])
    assert code == 0, err
    return json.loads(out)


def close(a, b):
    return abs(a - b) <= 1e-5 * abs(b)


# T = L * phases + [d > 1] (nvls ? S/B_nvl : 2(d-1)/d S/B_nvl) + [D > 1] 2(D-1)/D (S/d)/B_nic, in us (bytes/us = GB/s * 1e3)
nvls = fig4("--system", "gb200-nvl72", "--gpus", "72", "--bytes", "1G", "--nvls")
check(close(nvls["time_us"], S / 900e3 + 5), f"GB200 72 GPUs NVLS 1 GiB: {nvls['time_us']} us = S/900 GB/s + 5 us")
ring4 = fig4("--system", "gb200-nvl72", "--racks", "4", "--gpus", "288", "--bytes", "1G")
want = 2 * 71 / 72 * S / 900e3 + 2 * 3 / 4 * (S / 72) / 50e3 + 3 * 5
check(close(ring4["time_us"], want) and ring4["domains"] == 4 and ring4["gpus_per_domain"] == 72,
      f"GB200 4 racks ring+ring 1 GiB: {ring4['time_us']} us = {want:.6g} us")
# Without --racks, the fewest racks that hold --gpus, as racksim collective (it refused 288 GPUs on 1 rack)
check(fig4("--system", "gb200-nvl72", "--gpus", "288", "--bytes", "1G") == ring4, "--gpus 288 takes 4 racks by itself")
slow = fig4("--system", "gb300-nvl72", "--racks", "2", "--gpus", "144", "--bytes", "1G", "--nvls", "--nic-GBps", "25",
            "--efficiency", "0.8", "--phase-latency-us", "0")
want = S / (900e3 * 0.8) + 2 * 1 / 2 * (S / 72) / (25e3 * 0.8)
check(close(slow["time_us"], want) and slow["nic_GBps"] == 20, f"GB300 2 racks, NIC 25 GB/s at 80 %: {slow['time_us']} us")
rows = fig4("--system", "hgx-h100", "--gpus", "8", "--min-bytes", "1K", "--max-bytes", "1M", "--step-factor", "32")
check([r["bytes"] for r in rows] == [1024, 32768, 1048576], "sweep sizes 1K, 32K, 1M")
check(all(r == fig4("--system", "hgx-h100", "--gpus", "8", "--bytes", str(r["bytes"])) for r in rows),
      "each sweep row equals the single-size answer")

for args, words in [
    (["fig4", "--system", "gb200-nvl72", "--gpus", "72", "--bytes", "1G", "--efficiency", "1.5"], ["--efficiency", "(0, 1]"]),
    (["fig4", "--system", "gb200-nvl72", "--gpus", "72"], ["--bytes", "one size"]),
    (["fig4", "--system", "gb200-nvl72", "--gpus", "72", "--bytes", "1G", "--min-bytes", "1K"], ["excludes"]),
    (["fig4", "--system", "gb200-nvl72", "--gpus", "72", "--bytes", "1G", "--nic-GBps", "-1"], ["--nic-GBps", "(0, 1e6]"]),
    (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--nic-GBps", "0"],
     ["--nic-GBps", "invalid value 0", "[1e-06, 1e+06]"]),
    # below a topology file's floor: refused naming --nic-GBps (the engine's request check named
    # /nic_types/0/bandwidth_GBps, a path the user never wrote)
    (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--nic-GBps", "1e-300"],
     ["--nic-GBps", "invalid value 1e-300", "[1e-06, 1e+06]"]),
    (["collective", "--system", "rtx4090-pcie", "--op", "all_reduce", "--gpus", "1", "--bytes", "1G", "--nic-GBps", "50"],
     ["--nic-GBps", "rtx4090-pcie has none"]),
]:
    code, out, err = run(args)
    check(code == 2 and not out and err.count("\n") == 1 and all(w in err for w in words),
          f"{' '.join(args[:1] + args[-2:])}: exit {code}, {err.strip()!r}")

# Ring inside each rack: its phases run one after the other, so the NIC phase shows in full (with NVLS inside
# it hides under NCCL's NVLS rate at 1 GiB, even at 10 GB/s: S/72 per GPU).
base = ["collective", "--system", "gb200-nvl72", "--racks", "2", "--op", "all_reduce", "--gpus", "144", "--bytes", "1G",
        "--algo", "hierarchical", "--inner", "ring", "--calibration", "none"]
default = run(base)
same = run(base + ["--nic-GBps", "50"])  # ConnectX-7's own 400 Gb/s = 50 GB/s
check(default[0] == 0 and same[1] == default[1], "--nic-GBps 50 on GB200 (CX-7's own speed) gives byte-identical JSON")
slower = json.loads(run(base + ["--nic-GBps", "10"])[1])
faster = json.loads(default[1])
check(slower["time_us"] > 1.2 * faster["time_us"],
      f"a 10 GB/s NIC makes the 2-rack all-reduce slower: {slower['time_us']} vs {faster['time_us']} us")

print(f"{len(failures)} failed" if failures else "all fig4 / --nic-GBps checks passed")
sys.exit(1 if failures else 0)
