#!/usr/bin/env python3
"""check_compute_torch_data.py: the committed compute_torch.jsonl of an H100/H200 run parses and is plausible.

    python3 tests/probes/check_compute_torch_data.py calibrate/data/h200-sxm-1gpu-2026-12-02/compute_torch.jsonl

Checks (calibrate/probes/README.md, compute_torch): every line a JSON object with "record"; a header naming
the probe and an H100/H200, an end record with status ok, no error record; each kind (gemm, grouped_gemm,
attention, elementwise, launch) present with its keys and units; FLOP and byte counts agree with the stated
conventions; the headline figures lie in wide plausible bands (chosen before the data, not fitted to it):
fp8 8192^3 at 0.3-1.0 of its 1978.9 TFLOP/s peak, bf16 8192^3 at 0.5-1.0 of 989.4, the best attention
forward at 0.2-1.0 and forward+backward at 0.15-1.0 of the bf16 peak, grouped/dense ratios in (0, 1.5],
an add on the largest tensor at 0.5-1.0 of the HBM peak, launch floors of 0.5-200 us an op.
Exit 0 when all hold; else each failure on one line on stderr, exit 1."""
import json
import sys

REQUIRED = {
    "gemm": ("dtype", "api", "m", "n", "k", "flop", "time_us", "time_min_us", "time_max_us", "TFLOPS",
             "peak_TFLOPS", "fraction_of_peak", "iters", "check"),
    "grouped_gemm": ("impl", "experts", "tokens_per_expert", "hidden", "expert_ffn", "proj", "m", "n", "k", "flop",
                     "time_us", "TFLOPS", "dense_time_us", "dense_TFLOPS", "ratio_to_dense", "iters", "check"),
    "attention": ("backend", "mode", "batch", "seq", "heads", "kv_heads", "head_dim", "gqa", "flop", "time_us",
                  "TFLOPS", "peak_TFLOPS", "fraction_of_peak", "iters"),
    "elementwise": ("op", "tokens", "hidden", "elements", "kernels", "bytes", "bytes_ideal", "time_us", "GBps",
                    "GBps_ideal", "peak_GBps", "fraction_of_peak", "iters"),
    "launch": ("op", "mode", "ops_per_repetition", "time_per_op_us", "iters"),
}


def main(path):
    fails = []
    recs = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                fails.append(f"line {i}: not JSON ({e})")
                continue
            if not isinstance(r, dict) or "record" not in r:
                fails.append(f"line {i}: no 'record' key")
                continue
            recs.append((i, r))
    if not recs:
        return [f"{path}: no records"]
    h = recs[0][1]
    if h.get("record") != "header" or h.get("probe") != "compute_torch":
        fails.append("first record is not the compute_torch header")
    if not any(s in (h.get("device") or "") for s in ("H100", "H200")):
        fails.append(f"header device {h.get('device')!r} is not an H100/H200 (these bands are Hopper's)")
    if recs[-1][1].get("record") != "end" or recs[-1][1].get("status") != "ok":
        fails.append("last record is not {'record':'end','status':'ok'}")
    by = {}
    for i, r in recs:
        k = r["record"]
        if k == "error":
            fails.append(f"line {i}: error record: {r}")
        by.setdefault(k, []).append((i, r))
        for key in REQUIRED.get(k, ()):
            if key not in r:
                fails.append(f"line {i}: {k} record lacks '{key}'")
    for k in REQUIRED:
        if not by.get(k):
            fails.append(f"no '{k}' records")
    if fails:
        return fails

    def close(a, b, tol=0.01):
        return abs(a - b) <= tol * max(abs(a), abs(b))

    for i, r in by["gemm"] + by["grouped_gemm"]:
        if r["flop"] != 2 * r["m"] * r["n"] * r["k"]:
            fails.append(f"line {i}: flop != 2mnk")
        if not close(r["TFLOPS"], r["flop"] / r["time_us"] / 1e6):
            fails.append(f"line {i}: TFLOPS != flop / time_us / 1e6")
        if r["check"] != "ok":
            fails.append(f"line {i}: spot check {r['check']} (max_rel_err {r.get('max_rel_err')})")
        if "time_min_us" in r and not r["time_min_us"] <= r["time_us"] <= r["time_max_us"]:
            fails.append(f"line {i}: time_us outside [min, max]")
    for i, r in by["attention"]:
        fwd = 4 * r["batch"] * r["heads"] * r["seq"] * r["seq"] * r["head_dim"] // 2
        want = fwd if r["mode"] == "fwd" else fwd * 7 // 2
        if r["flop"] != want:
            fails.append(f"line {i}: attention flop {r['flop']} != {want} (fwd 4bhs^2d/2, fwd+bwd 3.5x)")
        if not close(r["TFLOPS"], r["flop"] / r["time_us"] / 1e6):
            fails.append(f"line {i}: TFLOPS != flop / time_us / 1e6")
    for i, r in by["elementwise"]:
        if not close(r["GBps"], r["bytes"] / r["time_us"] / 1e3):
            fails.append(f"line {i}: GBps != bytes / time_us / 1e3")
        if r["bytes_ideal"] > r["bytes"]:
            fails.append(f"line {i}: bytes_ideal above bytes")

    def band(what, v, lo, hi):
        if v is None or not lo <= v <= hi:
            fails.append(f"{what} = {v}, outside [{lo}, {hi}]")

    def gemm(dtype, s, fast=False):
        return [r for _, r in by["gemm"] if r["dtype"] == dtype and r["m"] == r["n"] == r["k"] == s
                and r.get("fast_accum", False) == fast]

    g = gemm("fp8_e4m3", 8192)
    if not g:
        fails.append("no fp8_e4m3 8192^3 gemm record (fast_accum false)")
    for r in g:
        band("fp8 8192^3 fraction_of_peak", r["fraction_of_peak"], 0.3, 1.0)
        if r["peak_TFLOPS"] != 1978.9:
            fails.append(f"fp8 peak_TFLOPS {r['peak_TFLOPS']} is not the datasheet 1978.9")
    g = gemm("bf16", 8192)
    if not g:
        fails.append("no bf16 8192^3 gemm record")
    for r in g:
        band("bf16 8192^3 fraction_of_peak", r["fraction_of_peak"], 0.5, 1.0)
    for mode, lo in (("fwd", 0.2), ("fwd_bwd", 0.15)):
        fr = [r["fraction_of_peak"] for _, r in by["attention"] if r["mode"] == mode and r["head_dim"] == 128
              and r["seq"] >= 4096]
        if not fr:
            fails.append(f"no attention {mode} record at head_dim 128, seq >= 4096")
        else:
            band(f"best attention {mode} fraction_of_peak (head_dim 128)", max(fr), lo, 1.0)
    for i, r in by["grouped_gemm"]:
        band(f"line {i}: grouped ratio_to_dense", r["ratio_to_dense"], 1e-6, 1.5)
    if not any(r["impl"] == "torch._grouped_mm" for _, r in by["grouped_gemm"]) and h.get("has_grouped_mm"):
        fails.append("torch has _grouped_mm but no torch._grouped_mm record")
    adds = [r for _, r in by["elementwise"] if r["op"] == "add"]
    if not adds:
        fails.append("no elementwise add record")
    else:
        band("elementwise add (largest) fraction_of_peak", max(adds, key=lambda r: r["elements"])["fraction_of_peak"],
             0.5, 1.0)
    for i, r in by["launch"]:
        band(f"line {i}: launch {r['op']} {r['mode']} time_per_op_us", r["time_per_op_us"], 0.5, 200)
    return fails


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: check_compute_torch_data.py COMPUTE_TORCH_JSONL", file=sys.stderr)
        sys.exit(2)
    try:
        problems = main(sys.argv[1])
    except OSError as e:
        problems = [f"cannot read {sys.argv[1]}: {e}"]
    for p in problems:
        print(f"check_compute_torch_data: {p}", file=sys.stderr)
    if not problems:
        print(f"check_compute_torch_data: {sys.argv[1]}: ok")
    sys.exit(1 if problems else 0)
