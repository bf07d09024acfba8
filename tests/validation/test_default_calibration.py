#!/usr/bin/python3
"""calibrate/default.json is what scripts/make-default-calibration.sh produces from committed data: a
fresh fit is deterministic (two runs, identical bytes) and matches the shipped file's parameters (to
1 % for efficiencies, 5 % or 0.2 us for overheads: small changes of the analytic model move the fit a
little; a larger change means the shipped calibration is stale and the script must be re-run). The
fit's held-out checks stay honest: with the Hopper
NVLS parameters fitted on one system only, the other system's sweep is predicted within the issue's
bounds (median |error| <= 10 % at >= 64 MiB, <= 25 % below): fit on hgx-h100, predict hgx-h200, and the
reverse. Every fitted entry names its data and residual (the calibration's `fit` objects)."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SRC = os.environ["RACKSIM_SOURCE_DIR"]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        # The script's command, with outputs redirected to the temporary directory.
        script = open(os.path.join(SRC, "scripts", "make-default-calibration.sh")).read()
        assert "--out calibrate/default.json" in script and "--report calibrate/fit-report.md" in script
        cmd = [BIN, "calibrate", "fit", "--name", "default",
               "--published", "calibrate/data/published_measurements.json",
               "--probes", "calibrate/data/h200-pcie-1gpu-2026-11-29",
               "--probes", "calibrate/data/h200-nvswitch-2gpu-2026-11-29=hgx-h200",
               "--out", os.path.join(tmp, "default.json"), "--report", os.path.join(tmp, "fit-report.md")]
        for arg in ("--published calibrate/data/published_measurements.json",
                    "--probes calibrate/data/h200-pcie-1gpu-2026-11-29",
                    "--probes calibrate/data/h200-nvswitch-2gpu-2026-11-29=hgx-h200"):
            if arg not in script.replace("\\\n", " ").replace("  ", " "):
                failures.append("scripts/make-default-calibration.sh no longer passes '%s': update this test" % arg)
        texts = []
        for _ in range(2):
            run = subprocess.run(cmd, cwd=SRC, capture_output=True, text=True, timeout=300)
            if run.returncode != 0:
                print(run.stdout, run.stderr)
                return 1
            texts.append(open(os.path.join(tmp, "default.json")).read())
        if texts[0] != texts[1]:
            failures.append("two fits of the same data differ: the fit is not deterministic")
        fresh = texts[0]
        report = json.load(open(os.path.join(tmp, "fit-report.json")))
    cal = json.loads(fresh)
    shipped = json.load(open(os.path.join(SRC, "calibrate", "default.json")))
    for group in ("links", "algorithms"):
        for key, entry in cal[group].items():
            old = shipped[group].get(key)
            if old is None:
                failures.append("%s/%s missing from calibrate/default.json: run scripts/make-default-calibration.sh"
                                % (group, key))
                continue
            for name, value in entry.items():
                if not isinstance(value, (int, float)):
                    continue
                was = old.get(name)
                tol = 0.01 * abs(value) if "efficiency" in name else max(0.05 * abs(value), 0.2)
                if name == "half_efficiency_bytes":
                    tol = max(0.05 * abs(value), 1024.0)
                if was is None or abs(was - value) > tol:
                    failures.append("%s/%s %s: shipped %s, fresh fit %s: calibrate/default.json is stale, run "
                                    "scripts/make-default-calibration.sh" % (group, key, name, was, value))
    for kind in ("pcie", "nvlink", "c2c", "nic"):
        fit = cal["links"][kind].get("fit")
        if not fit or fit["points"] < 1 or not fit["data"]:
            failures.append("links/%s has no fit record" % kind)
    for key in ("all_reduce/nvls", "all_reduce/ring"):
        fit = cal["algorithms"][key].get("fit")
        if not fit or fit["points"] < 20:
            failures.append("algorithms/%s: fit record missing or fewer than 20 points" % key)
    folds = {h["left_out"]: h for h in report["held_out"] if h["key"] == "all_reduce/nvls"}
    for system in ("system hgx-h100", "system hgx-h200"):
        h = folds.get(system)
        if not h:
            failures.append("no held-out NVLS fold for %s" % system)
            continue
        print("NVLS held out %s: %d points, median |error| %.1f %% below 64 MiB, %.1f %% at or above"
              % (system, h["points"], 100 * h["median_abs_error_below_64MiB"], 100 * h["median_abs_error_at_or_above_64MiB"]))
        if h["points_below_64MiB"] < 16 or h["points_at_or_above_64MiB"] < 8:
            failures.append("%s: the held-out sweep lost points" % system)
        if h["median_abs_error_below_64MiB"] > 0.25 or h["median_abs_error_at_or_above_64MiB"] > 0.10:
            failures.append("%s: held-out NVLS error above the bounds" % system)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
