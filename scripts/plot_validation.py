#!/usr/bin/python3
"""Predicted vs measured curves from the JSON `racksim validate` writes (out/validation.json).

    /usr/bin/python3 scripts/plot_validation.py [out/validation.json] [out/validation.png]

One panel per measured sweep (series with 4 or more sizes): the measured bandwidth (busbw for
collectives, bytes / time for copies and HBM streams) against size, racksim's prediction with the
calibration (solid) and with the vendor peaks (calibration none, dashed). Single-point records are
shown in a last panel as predicted / measured ratios.
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "out/validation.json"
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    with open(src) as f:
        doc = json.load(f)
    series = {}
    for r in doc["rows"]:
        series.setdefault(r["series"], []).append(r)
    sweeps = [(name, rows) for name, rows in series.items() if len(rows) >= 4]
    singles = [rows[0] for name, rows in series.items() if len(rows) < 4]
    panels = len(sweeps) + (1 if singles else 0)
    cols = 3
    rows_n = max(1, math.ceil(panels / cols))
    fig, axes = plt.subplots(rows_n, cols, figsize=(6 * cols, 4.2 * rows_n), squeeze=False)
    for ax, (name, rows) in zip(axes.flat, sweeps):
        rows = sorted(rows, key=lambda r: r["bytes"])
        x = [r["bytes"] for r in rows]
        ax.plot(x, [r["measured_GBps"] for r in rows], "ko", ms=4, label="measured")
        ax.plot(x, [r["predicted_GBps"] for r in rows], "C0-", label="racksim, calibration " + doc["calibration"])
        ax.plot(x, [r["uncalibrated_GBps"] for r in rows], "C3--", label="racksim, vendor peak")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        kind = rows[0]["kind"]
        ax.set_ylabel("busbw (GB/s)" if kind == "collective" else "bandwidth (GB/s)")
        ax.set_xlabel("size (bytes)")
        med = sorted(abs(r["error"]) for r in rows)[len(rows) // 2]
        medu = sorted(abs(r["uncalibrated_error"]) for r in rows)[len(rows) // 2]
        ax.set_title("%s\n%s [%s]: median |error| %.1f %% (peak %.1f %%)"
                     % (name[:60], rows[0]["what"], rows[0]["system"], 100 * med, 100 * medu), fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    if singles:
        ax = axes.flat[len(sweeps)]
        labels = [("%s %s" % (r["system"], r["what"]))[:40] for r in singles]
        y = range(len(singles))
        ax.barh(y, [1 + r["error"] for r in singles], color="C0", height=0.4, label="calibrated")
        ax.barh([v + 0.4 for v in y], [1 + r["uncalibrated_error"] for r in singles], color="C3", height=0.4,
                label="vendor peak")
        ax.axvline(1.0, color="k", lw=1)
        ax.set_yticks([v + 0.2 for v in y])
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xlabel("predicted / measured time")
        ax.set_title("single-point records", fontsize=8)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[panels:]:
        ax.axis("off")
    fig.suptitle("racksim validate (%s model): predicted vs measured" % doc["model"])
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("wrote", dst)


if __name__ == "__main__":
    main()
