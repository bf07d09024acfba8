"""Exact aggregation of symmetric work (issue 14, sim/engine/aggregation.hpp): on every case where both run,
the engine's aggregated run (each class of symmetric copies once) and its full run (`--aggregation off`, every
transfer) agree within 0.5 % on the time, every phase, the bytes and peak utilisation of every link kind, and
(in the Perfetto trace) every task's start and end and every link's busy intervals. The aggregated cases must
really aggregate (the result says "aggregated" and simulates far fewer tasks), and where symmetry is broken (a
degraded link, a failed NIC) the engine must fall back to the full run by itself and say so."""
import json
import os
import subprocess
import sys
import tempfile

RACKSIM = os.environ["RACKSIM_BIN"]
TOLERANCE = 0.005

# (system, racks, op, gpus, bytes, extra options); every one aggregated.
CASES = [
    ("hgx-h100", 1, "all_reduce", 8, "1G", ["--algo", "ring"]),
    ("hgx-h100", 1, "all_reduce", 8, "1G", ["--algo", "nvls"]),
    ("hgx-h100", 1, "all_gather", 8, "64M", []),
    ("gb200-nvl72", 1, "all_reduce", 72, "1G", ["--algo", "ring"]),
    ("gb200-nvl72", 1, "all_reduce", 72, "1G", ["--algo", "ring", "--calibration", "none"]),
    ("gb200-nvl72", 1, "all_reduce", 72, "1G", ["--algo", "nvls"]),
    ("gb200-nvl72", 1, "reduce_scatter", 72, "256M", []),
    ("gb200-nvl72", 1, "all_to_all", 72, "1G", []),
    ("gb200-nvl72", 1, "all_reduce", 72, "4K", []),
    ("gb200-nvl72", 2, "all_reduce", 144, "1G", []),  # NCCL's NVLS-tree, 32 channels
    ("gb200-nvl72", 2, "all_reduce", 144, "1G", ["--calibration", "none"]),
    ("gb300-nvl72", 2, "all_reduce", 144, "1G", []),
    ("gb200-nvl72", 2, "all_reduce", 144, "1G", ["--algo", "hierarchical"]),
    ("gb200-nvl72", 2, "all_to_all", 144, "256M", []),
    ("gb200-nvl72", 4, "all_reduce", 288, "1G", ["--algo", "hierarchical", "--outer", "tree"]),
    ("gb200-nvl72", 8, "all_reduce", 576, "1G", ["--algo", "hierarchical"]),
    ("hgx-h100", 2, "all_reduce", 16, "256M", ["--algo", "ring"]),
    # NCCL's rail rings over 4 nodes, listed by their symmetry (one task per orbit, building_blocks.hpp)
    ("hgx-h100", 4, "all_reduce", 32, "1G", ["--algo", "ring"]),
    ("hgx-h100", 2, "all_reduce", 16, "256M", ["--algo", "tree"]),
    # CollNet (IB SHARP): the fabric planes of the NIC rails, and NCCL's choice with CollNet on.
    ("hgx-b200", 4, "all_reduce", 32, "256M", ["--algo", "collnet_direct"]),
    ("hgx-b200", 4, "all_reduce", 32, "256M", ["--algo", "collnet_chain"]),
    ("hgx-b200", 4, "all_reduce", 32, "256M", ["--collnet", "on"]),
]

# Symmetry broken: the full run must be taken, and the result must say why.
FALLBACK = [
    ("gb200-nvl72", 1, "all_reduce", 72, "1G", ["--algo", "ring", "--fail", "nvlink:0.3", "--partition-mode",
                                                "adaptive-bandwidth"]),
    ("gb200-nvl72", 2, "all_reduce", 144, "1G", ["--algo", "hierarchical", "--fail", "link:r0.t0.cpu0-nic0@0.5"]),
]


def run(system, racks, op, gpus, size, extra, aggregation, trace=None):
    cmd = [RACKSIM, "collective", "--system", system, "--racks", str(racks), "--op", op, "--gpus", str(gpus),
           "--bytes", size, "--format", "json", "--aggregation", aggregation, *extra]
    if trace:
        cmd += ["--trace", trace]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def close(a, b, scale=None):
    scale = max(abs(a), abs(b)) if scale is None else scale
    return abs(a - b) <= TOLERANCE * scale


def compare(name, full, agg, problems):
    if not close(full["time_us"], agg["time_us"]):
        problems.append(f"{name}: time {agg['time_us']} us aggregated vs {full['time_us']} us full")
    for pf, pa in zip(full["phases"], agg["phases"]):
        if pf["name"] != pa["name"] or not close(pf["time_us"], pa["time_us"], full["time_us"]):
            problems.append(f"{name}: phase {pf} vs {pa}")
    for lf, la in zip(full["links"], agg["links"]):
        if (lf["kind"], lf["links"], lf["bytes"]) != (la["kind"], la["links"], la["bytes"]) or \
                not close(lf["max_utilization"], la["max_utilization"], 1.0):
            problems.append(f"{name}: links {lf} vs {la}")
    if len(full["phases"]) != len(agg["phases"]) or len(full["links"]) != len(agg["links"]):
        problems.append(f"{name}: different phases or links")


def compare_traces(name, full_path, agg_path, span_us, problems):
    def events(path):
        doc = json.load(open(path))
        names = {e["pid"] * 100000 + e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("ph") == "M"
                 and e.get("name") == "thread_name"}
        out = {}
        for e in doc["traceEvents"]:
            if e.get("ph") == "X":
                out.setdefault((names.get(e["pid"] * 100000 + e["tid"], e["tid"]), e["name"]), []).append(
                    (e["ts"], e["ts"] + e["dur"]))
        return out
    full, agg = events(full_path), events(agg_path)
    if full.keys() != agg.keys():
        problems.append(f"{name}: trace tracks differ ({len(full)} vs {len(agg)} keys)")
        return
    worst = 0.0
    for key, spans in full.items():
        other = agg[key]
        if len(spans) != len(other):
            problems.append(f"{name}: {key} has {len(spans)} spans in full, {len(other)} aggregated")
            return
        for (a0, a1), (b0, b1) in zip(sorted(spans), sorted(other)):
            worst = max(worst, abs(a0 - b0), abs(a1 - b1))
    if worst > TOLERANCE * span_us:
        problems.append(f"{name}: a trace event moved by {worst:.3f} us (allowed {TOLERANCE * span_us:.3f} us)")


def main():
    problems = []
    for case in CASES:
        name = " ".join([case[0], f"x{case[1]}", case[2], str(case[3]), case[4], *case[5]])
        full = run(*case, "off")
        agg = run(*case, "auto")
        if agg["engine"]["mode"] != "aggregated" or full["engine"]["mode"] != "full":
            problems.append(f"{name}: engine modes {agg['engine']} / {full['engine']}")
            continue
        compare(name, full, agg, problems)
        print(f"{name}: {full['time_us']} us full, {agg['time_us']} us aggregated "
              f"({agg['engine']['simulated_tasks']} of {agg['engine']['tasks']} tasks)")
    # Per task and per link, through the trace, on a multi-rack run.
    with tempfile.TemporaryDirectory() as tmp:
        case = ("gb200-nvl72", 2, "all_reduce", 144, "256M", ["--algo", "hierarchical"])
        full = run(*case, "off", os.path.join(tmp, "full.json"))
        run(*case, "auto", os.path.join(tmp, "agg.json"))
        compare_traces("trace " + " ".join(map(str, case[:5])), os.path.join(tmp, "full.json"),
                       os.path.join(tmp, "agg.json"), full["time_us"], problems)
    for case in FALLBACK:
        name = " ".join([case[0], f"x{case[1]}", case[2], str(case[3]), case[4], *case[5]])
        full = run(*case, "off")
        auto = run(*case, "auto")
        if auto["engine"]["mode"] != "full" or not auto["engine"].get("note"):
            problems.append(f"{name}: expected the full run with a reason, got {auto['engine']}")
        elif auto["time_us"] != full["time_us"]:
            problems.append(f"{name}: fallback time {auto['time_us']} != full {full['time_us']}")
        print(f"{name}: fallback: {auto['engine']}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(CASES)} aggregated cases, {len(FALLBACK)} fallback case(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
