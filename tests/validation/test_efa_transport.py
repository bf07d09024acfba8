#!/usr/bin/python3
"""AWS EFA as a network transport (topologies/aws-p5.json, aws-p5en.json; docs/model.md section 7, "Network
transports"): a network step costs EFA's own latency from aws-ofi-nccl's tuner (20 us on P5, 18 on P5en),
while the latency the plugin reports to NCCL (75 / 35 us) only steers NCCL's choice. No figure is fitted and
no fit uses an EFA record, so AWS's published nccl-tests runs (calibrate/data/public_collectives.json, source
https://github.com/aws-samples/awsome-distributed-training/blob/7217859f/micro-benchmarks/nccl-tests/README.md
and .../slurm/topology-aware-nccl-tests/README.md) are a held-out test of them. Asserted, with the measured
errors (predicted time / measured time - 1) printed for every point:
  * p5 x2 (16 GPUs, Slurm series) at 8 B - 2 KiB, latency-bound: every |error| <= 25 % (measured -9 to -21 %;
    with ConnectX NICs standing in, before session 15, -55 to -61 %);
  * p5en x16 (128 GPUs) at 16 B: |error| <= 10 % (measured -1 %; -64 % before). Its 8 B row (983 us, the
    first call's warm-up in that README) is printed, not asserted;
  * the Slurm p5 and the p5en runs at >= 1 GiB: |error| <= 10 % (-6 to +8 %), the wire's regime, untouched by
    the transport.
  * session 28: the all-to-all of p5 at 2, 4, 8, 16 and 32 nodes (github.com/crazyguitar/aws-gpu-communication-
    benchmark @a77f70d, data/nccl_alltoall.csv; added after it was predicted): at 2 GiB every |error| <= 17 %
    (measured 8-16 % fast: racksim's EFA wire at the NICs' rate, the runs ~0.86 of it) and the predicted bus
    bandwidth falls with the node count as the measured one does (79 -> 54 -> 50 -> 44 -> 41 GB/s).
  * session 29: four more p5 x2 all-reduce sweeps, 8 B - 16 GiB (github.com/KeitaW/p5-nccl-test-2024-07-19
    @1c78584, three EKS logs; awsome-distributed-training's ParallelCluster guide @122bfce; added after they were
    predicted): at >= 1 GiB every |error| <= 10 % (measured -2 to +6 %).
  * session 48: NCCL PR #1112's three 4 GiB NVLS-tree all-reduces on 8 p5 nodes (github.com/NVIDIA/nccl/pull/1112,
    added after they were predicted): the two with 512 KiB chunks (2.19.1, and 2.19.3 with the PR) within 30 %
    (measured -26 %: racksim fast). Their 64 KiB twin (2.19.3 as released, 2.7x slower) is printed, not asserted:
    the chunk size costs nothing in the model (a connection's window over EFA's steps is not modelled).
Printed, not asserted: the p5 Slurm points at 4 KiB - 32 MiB, 24-52 % slow (EFA's per-message cost there is
not modelled, docs/model.md), and the same README's EKS series (NCCL 2.18.5), 28-60 % slow at 64 MiB - 1 GiB
and -2 % at 2 GiB."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SLURM = "AWS p5.48xlarge x2 (HGX H100 8-GPU, EFA), Slurm all_reduce 16 GPUs auto"
P5EN = "AWS p5en.48xlarge (HGX H200 8-GPU, EFA), 128 ranks all_reduce 128 GPUs auto"
KiB, GiB = 1024, 1024 ** 3


def main():
    # Only AWS's records are predicted (a record's prediction does not depend on the others, and the shipped
    # calibration is fixed): the whole validate took ~50 s of make test's 20 minutes, this ~5 s.
    source = os.path.join(os.environ.get("RACKSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                          "calibrate", "data", "public_collectives.json")
    with open(source) as f:
        aws = [r for r in json.load(f) if "AWS" in r.get("system", "")]
    with tempfile.TemporaryDirectory() as out:
        records = os.path.join(out, "aws_records.json")
        with open(records, "w") as f:
            json.dump(aws, f)
        run = subprocess.run([BIN, "validate", "--calibration", "default", "--no-probes", "--no-cross-validation",
                              "--data", "none", "--public", records, "--out-dir", out, "--format", "json"],
                             capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(run.stderr)
        return 1
    rows = [r for r in json.loads(run.stdout)["rows"] if r["system"] in ("aws-p5", "aws-p5en")]
    failures = []
    if len(rows) != 207:
        failures.append("%d AWS EFA rows predicted, expected 207 (169 p5 all-reduce, 35 p5 all-to-all, 3 p5en)" % len(rows))
    for r in sorted(rows, key=lambda r: (r["series"], r["bytes"])):
        print("%-9s %-70s %12d B  measured %9.1f us  predicted %9.1f us  %+6.1f %%" % (
            r["system"], r["series"][:70], r["bytes"], r["measured_time_us"], r["predicted_time_us"], 100 * r["error"]))

    def check(pick, bound, what):
        chosen = [r for r in rows if pick(r)]
        if not chosen:
            failures.append("%s: no point" % what)
        for r in chosen:
            if abs(r["error"]) > bound:
                failures.append("%s: %s at %d B off by %+.1f %% (bound %.0f %%)" % (
                    what, r["series"], r["bytes"], 100 * r["error"], 100 * bound))
        print("%s: %d point(s), worst |error| %.1f %% (bound %.0f %%)" % (
            what, len(chosen), 100 * max([abs(r["error"]) for r in chosen] or [0]), 100 * bound))

    check(lambda r: r["series"] == SLURM and r["bytes"] <= 2 * KiB, 0.25, "p5 x2, 8 B - 2 KiB")
    check(lambda r: r["series"] == P5EN and r["bytes"] == 16, 0.10, "p5en x16, 16 B")
    check(lambda r: r["series"] in (SLURM, P5EN) and r["bytes"] >= GiB, 0.10, "p5 x2 (Slurm) and p5en x16 at >= 1 GiB")
    check(lambda r: ("KeitaW" in r["series"] or "ParallelCluster" in r["series"]) and r["bytes"] >= GiB, 0.10,
          "p5 x2 (KeitaW's EKS logs, ParallelCluster guide) at >= 1 GiB")
    pr1112 = [r for r in rows if "PR #1112" in r["series"]]
    check(lambda r: r in pr1112 and r["measured_time_us"] < 50000, 0.30,
          "p5 x8 NVLS-tree at 4 GiB, 512 KiB chunks (NCCL PR #1112)")
    a2a = sorted((r for r in rows if r["what"].startswith("all_to_all") and r["bytes"] == 2 * GiB),
                 key=lambda r: int(r["what"].split(", ")[1].split()[0]))
    check(lambda r: r in a2a, 0.17, "p5 all-to-all at 2 GiB, 2-32 nodes")
    measured = [r["measured_GBps"] for r in a2a]
    predicted = [r["predicted_GBps"] for r in a2a]
    print("p5 all-to-all at 2 GiB, busbw by node count: measured %s, predicted %s" % (
        " ".join("%.1f" % x for x in measured), " ".join("%.1f" % x for x in predicted)))
    if len(a2a) != 5 or any(b >= a for a, b in zip(predicted, predicted[1:])):
        failures.append("p5 all-to-all at 2 GiB: the predicted bus bandwidth does not fall with the node count")
    if any(r.get("training") for r in rows):
        failures.append("an EFA record is marked as fit data: its transport figures would no longer be held out")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
