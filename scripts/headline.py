#!/usr/bin/python3
"""The headline of `make run`: a 1 GiB all-reduce on GB200 NVL72 vs GB300 NVL72 on 1, 2, 4 and 8 racks
(every GPU of each rack), what NCCL runs vs flat ring vs NVLS vs hierarchical (NVLS or ring inside each
rack, ring across),
through the Python bindings, at vendor peaks (calibration none, the course's inputs) and with the shipped
calibration, next to the course's Fig 4 model (seed course section 7).

Prints the tables; writes out/headline.json (every number; the engine's results exactly as
`racksim collective --format json` writes them) and out/fig4_allreduce.png (the course's Fig 4 in three
layers: the course's model, the engine at vendor peaks, the engine with the shipped calibration).

Run: PYTHONPATH=<build>/bindings:<source>/bindings/python /usr/bin/python3 scripts/headline.py [--out DIR]
Simulations run in threads (--workers, default the CPU count): each is a forked engine process and the
bindings release the GIL while it runs.
"""
import argparse
import concurrent.futures
import json
import math
import os
import sys
import tempfile
import time

import racksim
from racksim import plotting

SYSTEMS = {"gb200-nvl72": "GB200 NVL72 (ConnectX-7, 50 GB/s per GPU)",
           "gb300-nvl72": "GB300 NVL72 (ConnectX-8, 100 GB/s per GPU)"}
RACKS = [1, 2, 4, 8]
GPUS_PER_RACK = 72
SIZE = 1 << 30  # 1 GiB per GPU (nccl-tests' all_reduce size)
# (case, label, collective() arguments)
CASES = [
    ("auto", "NCCL's choice", {"algo": "auto"}),
    ("ring", "flat ring", {"algo": "ring"}),
    ("nvls", "NVLS", {"algo": "nvls"}),
    ("hier-nvls", "hier. NVLS+ring", {"algo": "hierarchical", "inner": "nvls"}),
    ("hier-ring", "hier. ring+ring", {"algo": "hierarchical", "inner": "ring"}),
]
CALIBRATIONS = [("none", "vendor peaks (calibration none)"), ("default", "shipped calibration (calibrate/default.json)")]
PHASE_LATENCY_US = 5.0  # the course's model: assumption, see racksim.fig4's docstring

# Panel (a) of the figure: inside one NVLink domain, time vs message size.
SWEEP = {"min_bytes": "1K", "max_bytes": "4G", "step_factor": 4}
SWEEP_CONFIGS = [  # (label, system, gpus, algo, colour)
    ("GB200/GB300 NVL72, 72 GPUs, ring", "gb200-nvl72", 72, "ring", "tab:blue"),
    ("GB200/GB300 NVL72, 72 GPUs, NVLS", "gb200-nvl72", 72, "nvls", "tab:orange"),
    ("HGX H100, 8 GPUs, ring", "hgx-h100", 8, "ring", "tab:green"),
    ("HGX H100, 8 GPUs, NVLS", "hgx-h100", 8, "nvls", "tab:red"),
]
# Panel (b): 1 GiB across racks. GB200 keeps panel (a)'s colours.
ACROSS = [("gb200-nvl72", "ring", "tab:blue"), ("gb200-nvl72", "hier-nvls", "tab:orange"),
          ("gb300-nvl72", "ring", "tab:purple"), ("gb300-nvl72", "hier-nvls", "tab:brown")]
VERBOSE = False


def engine_run(system, racks, calibration, kwargs):
    """The engine's dict, or {'n/a': the library's reason} when the combination cannot run.

    Flat rings across racks run on the engine as their quotient (NCCL's rail rings are symmetric over whole
    racks: one ring position per orbit, 165 600 of the 10.6 M transfers at 8 racks, ~1 s; session 53). Until
    then the analytic model priced them (marked 'a'); both agree to within 1e-5 there (nothing contends in a
    flat ring: at 1 GiB on 8 GB200 racks 372.139 and 372.138 GB/s of bus bandwidth with the shipped calibration)."""
    start = time.monotonic()
    try:
        system_handle = racksim.load(system, racks=racks)
        return system_handle.collective("all_reduce", GPUS_PER_RACK * racks, SIZE, calibration=calibration,
                                        **kwargs)
    except racksim.InputError as e:
        if "engine steps" not in str(e):
            return {"n/a": str(e)}
        # Beyond the engine's per-run budget: the analytic model prices it, marked 'a' like the flat rings.
        # (NCCL's NVLS-tree on 576 GPUs was, until the engine aggregated symmetric copies: issue 14.)
        return system_handle.analytic("all_reduce", GPUS_PER_RACK * racks, SIZE, calibration=calibration, **kwargs)
    finally:
        if VERBOSE:
            print(f"  {system} {racks} rack(s) {kwargs} {calibration}: {time.monotonic() - start:.1f} s",
                  file=sys.stderr, flush=True)


def course_model(system, racks, case):
    """The course's Fig 4 model for a case, or None where it has no counterpart: it has no flat ring
    across racks (its multi-rack form is the hierarchical one), and no NVLS across racks."""
    gpus = GPUS_PER_RACK * racks
    if case == "ring":
        return racksim.fig4(system, gpus, SIZE, racks=racks, phase_latency_us=PHASE_LATENCY_US) if racks == 1 else None
    if case == "nvls":
        return racksim.fig4(system, gpus, SIZE, racks=racks, nvls=True, phase_latency_us=PHASE_LATENCY_US) \
            if racks == 1 else None
    return racksim.fig4(system, gpus, SIZE, racks=racks, nvls=(case == "hier-nvls"), phase_latency_us=PHASE_LATENCY_US)


def run_all(workers):
    """Every engine run, keyed (system, racks, case, calibration) and ('sweep', i, calibration)."""
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for racks in sorted(RACKS, reverse=True):  # the slow 576-GPU flat rings first
            for system in SYSTEMS:
                for case, _, kwargs in CASES:
                    for calibration, _ in CALIBRATIONS:
                        jobs[(system, racks, case, calibration)] = pool.submit(engine_run, system, racks,
                                                                               calibration, kwargs)
        for i, (_, system, gpus, algo, _) in enumerate(SWEEP_CONFIGS):
            for calibration, _ in CALIBRATIONS:
                jobs[("sweep", i, calibration)] = pool.submit(
                    lambda s=system, g=gpus, a=algo, c=calibration: racksim.load(s).sweep(
                        "all_reduce", g, SWEEP["min_bytes"], SWEEP["max_bytes"], SWEEP["step_factor"], algo=a,
                        calibration=c))
        return {k: f.result() for k, f in jobs.items()}


def na_reason(case, racks, error):
    if case == "nvls" and racks > 1:
        return ("NVLS reduces inside one NVLink domain (one rack); across racks it runs as hier. NVLS+ring "
                "(NCCL's NVLS-tree)")
    return error


def headline_rows(results):
    rows = []
    for system in SYSTEMS:
        for racks in RACKS:
            for case, label, kwargs in CASES:
                course = course_model(system, racks, case)
                for calibration, _ in CALIBRATIONS:
                    r = results[(system, racks, case, calibration)]
                    row = {"system": system, "racks": racks, "gpus": GPUS_PER_RACK * racks, "case": case,
                           "label": label, "request": kwargs, "calibration": calibration}
                    if "n/a" in r:
                        row.update(available=False, reason=na_reason(case, racks, r["n/a"]), error=r["n/a"])
                    else:
                        row.update(available=True, result=r)
                    row["course_model"] = course
                    rows.append(row)
    return rows


def print_tables(rows):
    by = {(r["system"], r["racks"], r["case"], r["calibration"]): r for r in rows}
    notes = []

    def cell(row):
        if row["available"]:
            mark = " a" if row["result"].get("model") == "analytic" else ""
            return f"{plotting.time_label(row['result']['time_us'])} ({row['result']['busbw_GBps']:.0f}){mark}"
        if row["reason"] not in notes:
            notes.append(row["reason"])
        return f"n/a ({notes.index(row['reason']) + 1})"

    def course_cell(system, racks):
        hier = by[(system, racks, "hier-nvls", "none")]["course_model"]
        ring = by[(system, racks, "hier-ring", "none")]["course_model"]
        return f"{plotting.time_label(hier['time_us'])} / {plotting.time_label(ring['time_us'])}"

    print(f"1 GiB all-reduce per GPU on every GPU of 1, 2, 4 and 8 racks (72 GPUs per rack): time (busbw GB/s),\n"
          f"racksim's discrete-event engine. Course model: seed section 7 Fig 4 at vendor peaks with "
          f"{PHASE_LATENCY_US:g} us per phase,\nNVLS / ring inside each rack.\n")
    for system, name in SYSTEMS.items():
        for calibration, cal_label in CALIBRATIONS:
            print(f"{name}: {cal_label}")
            columns = [("racks", lambda r: str(r)), ("GPUs", lambda r: str(GPUS_PER_RACK * r))]
            for case, label, _ in CASES:
                columns.append((label, lambda r, c=case: cell(by[(system, r, c, calibration)])))
            if calibration == "none":
                columns.append(("course model", lambda r: course_cell(system, r)))
            print(plotting.results_table(RACKS, columns))
            print()
    for i, note in enumerate(notes):
        print(f"({i + 1}) n/a: {note}")
    print("NCCL's choice: what NCCL 2.28 runs (NVLS in one rack, NVLS-tree across racks; docs/model.md section 7).")
    print("The flat ring across racks is NCCL's: one ring per NIC rail its channels leave a rack through, each "
          "with its share of the data.")
    if any(row["available"] and row["result"].get("model") == "analytic" for row in rows):
        print("a: analytic model (beyond the engine's per-run budget); every other cell is the discrete-event engine.")
    else:
        print("Every cell is the discrete-event engine (flat rings across racks as their quotient: one ring position "
              "per orbit of their symmetry, exact; docs/performance.md).")
    print("\nGB300 / GB200 time with the shipped calibration (what ConnectX-8's doubled NIC bandwidth buys):")
    columns = [("racks", lambda r: str(r))]
    for case, label, _ in CASES:
        def ratio(r, c=case):
            a, b = by[("gb200-nvl72", r, c, "default")], by[("gb300-nvl72", r, c, "default")]
            if not (a["available"] and b["available"]):
                return "n/a"
            return f"{b['result']['time_us'] / a['result']['time_us']:.3f}"
        columns.append((label, ratio))
    print(plotting.results_table(RACKS, columns))


# The headline before the NCCL-faithful collective model (issue 11), for the table of what changed: the same
# cells computed by the commit before it (acd905f), kept in the repository.
BEFORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "headline-before-issue11.json")
WHY = {
    "ring": "inside a rack: NCCL's ring latencies (8.4 us + 3.4 us a step, Simple) and the Blackwell calibration; "
            "across racks: one ring per NIC rail, as NCCL's channels run, instead of one ring through one NIC",
    "nvls": "NCCL's NVLS bandwidth (heads x bwIntra x nvlsEfficiency, tuning.cc:285-300), about half the switch "
            "ports' line rate, as the 835-919 GB/s measured on NVL72 racks say",
    "hier-nvls": "racksim's own algorithm: inside each rack NCCL's NVLS as on one rack (its bandwidth and "
                 "calibration: = NVLS on 1 rack), GB200's NICs behind Grace (C2C + PCIe, NCCL's P2C path)",
    "hier-ring": "as hier. NVLS+ring, with NCCL's ring and its calibration inside each rack",
}


def print_changes(rows):
    """Old -> new time per cell, against BEFORE (skipped when the file is absent)."""
    if not os.path.exists(BEFORE):
        return
    before = {(r["system"], r["racks"], r["case"], r["calibration"]): r for r in json.load(open(BEFORE))["results"]}
    print("\nWhat the NCCL-faithful model (issue 11) changed: time now / before, per cell (docs/headline-before-issue11.json):")
    for calibration, cal_label in CALIBRATIONS:
        print(f"{cal_label}")
        columns = [("system", lambda k: k[0]), ("racks", lambda k: str(k[1]))]
        for case, label, _ in CASES:
            if case == "auto":
                continue
            def change(k, c=case):
                new = next((r for r in rows if (r["system"], r["racks"], r["case"], r["calibration"]) == (k[0], k[1], c, calibration)), None)
                old = before.get((k[0], k[1], c, calibration))
                if not (new and old and new["available"] and old["available"]):
                    return "n/a"
                return f"{new['result']['time_us'] / old['result']['time_us']:.2f}"
            columns.append((label, change))
        keys = [(system, racks) for system in SYSTEMS for racks in RACKS]
        print(plotting.results_table(keys, columns))
    for case, label, _ in CASES:
        if case in WHY:
            print(f"  {label}: {WHY[case]}")


def figure(results, rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.6))
    # (a) time vs size inside one NVLink domain.
    configs = {}
    for i, (label, system, gpus, algo, color) in enumerate(SWEEP_CONFIGS):
        configs[label] = color
        peak, cal = results[("sweep", i, "none")], results[("sweep", i, "default")]
        sizes = list(peak["bytes"])
        course = [racksim.fig4(system, gpus, s, nvls=(algo == "nvls"), phase_latency_us=PHASE_LATENCY_US)["time_us"]
                  for s in sizes]
        plotting.plot_layer(ax1, sizes, course, "course", color)
        plotting.plot_layer(ax1, sizes, peak["time_us"], "peak", color)
        plotting.plot_layer(ax1, cal["bytes"], cal["time_us"], "calibrated", color)
        plotting.heldout_band(ax1, cal["bytes"], cal["time_us"], cal["heldout_error"], color)
    plotting.size_axis(ax1)
    plotting.time_axis(ax1)
    ax1.grid(True, which="major", alpha=0.3)
    ax1.set_title("(a) one NVLink domain: all-reduce time vs message size\n"
                  "(GB300 has GB200's NVLink 5: identical inside the rack)", fontsize=10)
    plotting.layer_legends(ax1, configs)

    # (b) 1 GiB across racks.
    by = {(r["system"], r["racks"], r["case"], r["calibration"]): r for r in rows}
    configs = {}
    gpus = [GPUS_PER_RACK * r for r in RACKS]
    for system, case, color in ACROSS:
        configs[f"{SYSTEMS[system]}, {'flat ring' if case == 'ring' else 'hierarchical (NVLS in rack, ring across)'}"] \
            = color

        def series(calibration):
            return [by[(system, r, case, calibration)]["result"]["time_us"]
                    if by[(system, r, case, calibration)]["available"] else math.nan for r in RACKS]

        course = [by[(system, r, case, "none")]["course_model"] for r in RACKS]
        course = [c["time_us"] if c else math.nan for c in course]
        if case == "ring":  # the course's model has no flat ring across racks: its 1-rack point only
            plotting.plot_layer(ax2, gpus[:1], course[:1], "course", color, marker="_", markersize=12)
        else:
            plotting.plot_layer(ax2, gpus, course, "course", color)
        plotting.plot_layer(ax2, gpus, series("none"), "peak", color)
        plotting.plot_layer(ax2, gpus, series("default"), "calibrated", color)
        heldouts = [by[(system, r, case, "default")]["result"].get("heldout_error")
                    if by[(system, r, case, "default")]["available"] else None for r in RACKS]
        plotting.heldout_band(ax2, gpus, series("default"), heldouts, color)
    hier = by[("gb200-nvl72", 2, "hier-nvls", "default")]
    if hier["available"]:
        ax2.annotate("hierarchical: GB200 and GB300 engine curves overlap:\nthe NIC phase (S/72 per GPU) pipelines "
                     "under the\nNVLS phases: CX-8's doubled bandwidth does not show at 1 GiB",
                     xy=(144, hier["result"]["time_us"]), xytext=(150, 1.9e3), fontsize=7,
                     arrowprops={"arrowstyle": "->", "color": "0.4"})
    plotting.gpu_axis(ax2, gpus, label="GPUs in the all-reduce (72 per rack: 1, 2, 4, 8 racks; log scale)")
    plotting.time_axis(ax2)
    ax2.grid(True, which="major", alpha=0.3)
    ax2.set_title("(b) 1 GiB all-reduce across racks over InfiniBand\n"
                  "NVLS alone: n/a beyond 1 rack (one NVLink domain); at 1 rack hierarchical = NVLS\nflat ring beyond 1 rack: NCCL's rings, one per NIC rail", fontsize=10)
    plotting.layer_legends(ax2, configs, loc_configs="upper left", loc_layers="center right")
    fig.suptitle("All-reduce time on different machines (seed course, section 7, Fig 4), by racksim\n"
                 "shaded: the measured times the calibrated curve's held-out error allows (90 % of its class's points "
                 "on systems the fit had not seen)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")  # the path may be a temporary name without .png
    plt.close(fig)


def write_outputs(out, doc, draw_png):
    """out/headline.json and out/fig4_allreduce.png whole or not at all (issue 16): each is written to a
    temporary name in `out`, and both are renamed into place only once both are written; on any error
    the temporary files are removed and the old outputs, if any, stay as they were."""
    targets = [os.path.join(out, "headline.json"), os.path.join(out, "fig4_allreduce.png")]
    temps = []
    try:
        for target in targets:
            fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".tmp-", dir=out)
            os.close(fd)
            temps.append(temp)
        with open(temps[0], "w") as f:
            json.dump(doc, f, indent=1, default=lambda o: o.item())  # numpy scalars from the sweep DataFrames
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        draw_png(temps[1])
        for temp, target in zip(temps, targets):
            os.chmod(temp, 0o644)
            os.replace(temp, target)
    finally:
        for temp in temps:
            if os.path.exists(temp):
                os.unlink(temp)
    return targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="out", help="output directory (default: out)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="simulations run at once (default: the CPU count)")
    parser.add_argument("--verbose", action="store_true", help="print each simulation's wall time on stderr")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    start = time.monotonic()
    os.makedirs(args.out, exist_ok=True)
    results = run_all(max(1, args.workers))
    rows = headline_rows(results)
    print_tables(rows)
    print_changes(rows)
    doc = {
        "what": "1 GiB all-reduce (nccl-tests size) on every GPU of 1, 2, 4 and 8 racks of GB200 and GB300 NVL72: "
                "racksim's engine at vendor peaks (calibration none) and with the shipped calibration, and the "
                "course's Fig 4 model (seed course section 7)",
        "op": "all_reduce",
        "bytes": SIZE,
        "course_model_phase_latency_us": PHASE_LATENCY_US,
        "results": rows,
        "fig4_size_sweep": [
            {"label": label, "system": system, "gpus": gpus, "algo": algo,
             "engine_vendor_peak": results[("sweep", i, "none")].to_dict("records"),
             "engine_calibrated": results[("sweep", i, "default")].to_dict("records")}
            for i, (label, system, gpus, algo, _) in enumerate(SWEEP_CONFIGS)],
    }
    json_path, png = write_outputs(args.out, doc, lambda path: figure(results, rows, path))
    print(f"\nwrote {json_path} and {png} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
