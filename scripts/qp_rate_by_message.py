#!/usr/bin/python3
"""Does a queue pair's rate depend on the size of the messages it carries? (docs/decisions.md, session 40)

racksim prices the verbs queue pairs of a run across NVLink domains at one fraction of the NIC's line rate
(`qp_line_fraction`, fitted on ring, tree and NVLS-tree records together). An alternative law is a fixed cost
per message (per RDMA write): a queue pair's rate would then grow with the message, m / (m + line x cost).
NCCL's messages on a net connection differ by algorithm: a ring (Simple) posts one slice per send, 2 steps of
512 KiB = 1 MiB with the default 4 MiB buffer (collectives.h: ALLREDUCE_SLICESTEPS = ALLGATHER_SLICESTEPS =
NCCL_STEPS / 4; the proxy sends sliceSteps steps at a time, transport/net.cc), NVLS-tree one chunk (64 KiB from
four nodes on, 128 KiB on two or three: enqueue.cc's NVLS-tree chunk, nvls.cc's NVLSTREE_MAX_CHUNKSIZE).

This re-prices every shipped record with the shipped calibration, its qp_line_fraction replaced by each of a few
values, keeps the records whose time moves with it (the floor binds), and prints, per algorithm, system and node
count, the fraction at which the median signed error crosses zero: the rate those records imply. If a cost per
message set the rate, the 1 MiB rings would imply a fraction several times the 64 KiB NVLS-trees'.

Usage: /usr/bin/python3 scripts/qp_rate_by_message.py [RACKSIM_BIN] (default build/cli/racksim; ~2.5 min on 2 cores)
"""
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

FRACTIONS = [0.30, 0.34, 0.3863, 0.43, 0.48]
# NCCL's message on a net connection (bytes), by racksim algorithm key and node count; see the docstring.
RING_SLICE_BYTES = 2 * (4 << 20) // 8


def message_bytes(key, domains):
    if key.endswith("/ring"):
        return RING_SLICE_BYTES
    if key == "all_reduce/nvls_tree":
        return 64 << 10 if domains >= 4 else 128 << 10
    return None


def with_fraction(calibration, fraction):
    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "qp_line_fraction":
                    x[k] = fraction
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    c = json.loads(json.dumps(calibration))
    walk(c)
    return c


def validate(racksim, calibration_path, out_dir, cross_validation):
    args = [racksim, "validate", "--calibration", calibration_path, "--out-dir", out_dir]
    if not cross_validation:
        args.append("--no-cross-validation")
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return out_dir


def main():
    racksim = sys.argv[1] if len(sys.argv) > 1 else "build/cli/racksim"
    calibration = json.load(open("calibrate/default.json"))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for f in FRACTIONS:
                path = os.path.join(tmp, "cal_%s.json" % f)
                json.dump(with_fraction(calibration, f), open(path, "w"))
                jobs[f] = pool.submit(validate, racksim, path, os.path.join(tmp, "v_%s" % f), False)
            # The algorithm NCCL runs for each record (resolved key) comes from the cross-validation's predictions.
            cv_job = pool.submit(validate, racksim, "default", os.path.join(tmp, "cv"), True)
        rows = {}
        for f, job in jobs.items():
            rows[f] = {(r["id"], r["bytes"], r["what"]): r for r in json.load(open(os.path.join(job.result(), "validation.json")))["rows"]
                       if r["kind"] == "collective"}
        resolved = {p["id"]: p for p in json.load(open(os.path.join(cv_job.result(), "cross_validation.json")))[0]["predictions"]}
    groups = collections.defaultdict(list)
    for k, r in rows[FRACTIONS[0]].items():
        times = [rows[f][k]["predicted_time_us"] for f in FRACTIONS if k in rows[f]]
        p = resolved.get(r["id"])
        if len(times) < len(FRACTIONS) or p is None or r["bytes"] < 64 << 20:
            continue
        if abs(times[0] / times[-1] - 1) < 0.01:
            continue  # the queue pairs do not bind this record
        m = message_bytes(p["key"], p["domains"])
        if m is None:
            continue
        groups[(p["key"], p["system"], "4+ nodes" if p["domains"] >= 4 else "2-3 nodes", m)].append(k)
    print("%-22s %-12s %-10s %8s %7s  %s  %s" % ("algorithm", "system", "nodes", "message", "records",
                                                 "  ".join("%6.4g" % f for f in FRACTIONS), "implied fraction"))
    for (key, system, nodes, m), keys in sorted(groups.items()):
        medians = []
        for f in FRACTIONS:
            e = sorted(rows[f][k]["predicted_time_us"] / rows[f][k]["measured_time_us"] - 1 for k in keys)
            medians.append(e[len(e) // 2])
        implied = None
        for i in range(len(FRACTIONS) - 1):
            a, b = medians[i], medians[i + 1]
            if a != b and (a >= 0 >= b or a <= 0 <= b):
                implied = FRACTIONS[i] + (FRACTIONS[i + 1] - FRACTIONS[i]) * a / (a - b)
                break
        print("%-22s %-12s %-10s %6dKiB %7d  %s  %s" % (key, system, nodes, m >> 10, len(keys),
                                                     "  ".join("%+5.1f%%" % (100 * x) for x in medians),
                                                     "%.3f" % implied if implied else "outside"))
    print("columns: median signed error (predicted time / measured - 1) with each qp_line_fraction; "
          "implied fraction: where it crosses zero")


if __name__ == "__main__":
    main()
