"""`--algo auto` picks with the calibration the run uses. On one GB200 NVL72 rack at 1 GiB, vendor peaks
(--calibration none) favour NVLS (1229 us vs hierarchical 1245 us), while the shipped calibration's lower
NVLS efficiency (calibrate/default.json: all_reduce/nvls vs ring-inside-hierarchical) favours hierarchical.
A pick made with the wrong calibration would report NVLS for both."""
import json
import os
import subprocess
import sys

RACKSIM = os.environ["RACKSIM_BIN"]
REQUEST = ["collective", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "72", "--bytes", "1G",
           "--format", "json"]


def run(*extra):
    out = subprocess.run([RACKSIM, *REQUEST, *extra], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    failures = []
    for calibration in ("none", "default"):
        auto = run("--calibration", calibration)
        times = {algo: run("--calibration", calibration, "--algo", algo)["time_us"]
                 for algo in ("nvls", "hierarchical", "ring")}
        fastest = min(times, key=times.get)
        if auto["algo"] != fastest:
            failures.append(f"calibration {calibration}: auto picked {auto['algo']}, fastest is {fastest} {times}")
        if abs(auto["time_us"] - times[fastest]) > 1e-6 * times[fastest]:
            failures.append(f"calibration {calibration}: auto time {auto['time_us']} != {fastest} {times[fastest]}")
    picks = {c: run("--calibration", c)["algo"] for c in ("none", "default")}
    if picks != {"none": "nvls", "default": "hierarchical"}:
        failures.append(f"expected nvls at vendor peaks and hierarchical calibrated, got {picks}")
    for f in failures:
        print("FAIL:", f)
    checks = 5
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
