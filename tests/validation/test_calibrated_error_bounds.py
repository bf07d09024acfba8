#!/usr/bin/python3
"""racksim issue 5, item 6: the shipped calibration must predict the published NCCL sweeps within
10 % (median |error|) at >= 64 MiB and 25 % below 64 MiB:
  * HGX H100 NVLS all_reduce sweep (Azure ND H100 v5, 24 sizes 1 KiB .. 8 GiB),
  * HGX H200 NVLS all_reduce sweep (Azure ND H200 v5, 24 sizes),
  * GB200 4-GPU tray ring all_reduce sweep (Azure ND GB200 v6, 24 sizes).
Measured values: calibrate/data/published_measurements.json (each record's `source`). The error is
predicted time / measured time - 1 from `racksim validate --calibration default --format json`.
The vendor-peak (uncalibrated) error is printed beside it: since NCCL's own protocol terms and caps went
into the model (issue 11) it is often close already (HGX H100 NVLS >= 64 MiB: 4 %), so it is not asserted
to be worse; the public records' leave-one-out errors are tests/validation/test_collective_cross_validation.py's. Both collective models are checked: the analytic model (which the
calibration was fitted through) and the discrete-event engine (not fitted through: a second opinion)."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SWEEPS = [
    "Azure ND H100 v5 (HGX H100 8-GPU, Xeon 8480C) all_reduce nvls",
    "Azure ND H200 v5 (HGX H200 8-GPU, Xeon 8480C) all_reduce nvls",
    "Azure ND GB200 v6 (one GB200 compute tray = 4 GPUs, NVL72 fabric) all_reduce ring",
]
LARGE = 64 * 1024 * 1024
BOUND_LARGE, BOUND_SMALL = 0.10, 0.25


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def main():
    failures = []
    for model in ("analytic", "engine"):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([BIN, "validate", "--calibration", "default", "--model", model, "--no-probes",
                                  "--public", "none", "--no-cross-validation", "--out-dir", out, "--format", "json"], capture_output=True, text=True, timeout=300)
            if run.returncode != 0:
                print(run.stderr)
                return 1
            doc = json.loads(run.stdout)
            for name in ("validation.md", "validation.json"):
                assert os.path.getsize(os.path.join(out, name)) > 0, name
        print("model:", model)
        check(doc, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def check(doc, failures):
    # The per-system summary counts the records the fits use, and only those ("Records the fits use"); every
    # record no fit uses is in one of the other two tables (collectives; memory copies and transfers).
    for s in doc["by_system"]:
        if s["band"] != "all":
            continue
        fitted = sum(1 for r in doc["rows"] if r["system"] == s["group"] and r["training"])
        if s["points"] != fitted:
            failures.append("%s: by_system counts %d points, the fits use %d" % (s["group"], s["points"], fitted))
    unfitted = sum(1 for r in doc["rows"] if not r["training"])
    tabled = sum(s["points"] for s in doc["never_fitted"] + doc["other_unfitted"])
    if unfitted != tabled:
        failures.append("%d records no fit uses, %d in the validation-only tables" % (unfitted, tabled))
    for series in SWEEPS:
        rows = [r for r in doc["rows"] if r["series"] == series]
        if len(rows) != 24:
            failures.append("%s: %d rows predicted, expected 24" % (series, len(rows)))
            continue
        for band, bound, pick in (("< 64 MiB", BOUND_SMALL, lambda r: r["bytes"] < LARGE),
                                  (">= 64 MiB", BOUND_LARGE, lambda r: r["bytes"] >= LARGE)):
            sel = [r for r in rows if pick(r)]
            err = median([abs(r["error"]) for r in sel])
            peak = median([abs(r["uncalibrated_error"]) for r in sel])
            print("%-80s %-9s n=%2d median |error| %5.1f %% (bound %2.0f %%), vendor peak %5.1f %%"
                  % (series, band, len(sel), 100 * err, 100 * bound, 100 * peak))
            if err > bound:
                failures.append("%s %s %s: median |error| %.1f %% > %.0f %%"
                                % (doc["model"], series, band, 100 * err, 100 * bound))


if __name__ == "__main__":
    sys.exit(main())
