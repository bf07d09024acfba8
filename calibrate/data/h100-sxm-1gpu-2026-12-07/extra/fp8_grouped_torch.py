#!/usr/bin/env python3
# Exploratory (session 49; run from the checkout root as `python3 calibrate/data/h100-sxm-1gpu-2026-12-07/extra/fp8_grouped_torch.py`, the output is fp8_grouped_torch.jsonl beside it): FP8 grouped expert GEMMs against FP8 dense GEMMs of the same FLOPs on
# one Hopper GPU, with the probe's own timer (calibrate/probes/compute_torch.py's Timer: queued GPU time).
import json, sys, importlib.util, traceback
import torch
sys.path.insert(0, "calibrate/probes")

spec = importlib.util.spec_from_file_location("ct", "calibrate/probes/compute_torch.py")
ct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ct)
tm = ct.Timer(torch, 15, 3)
dev = torch.device("cuda")
f8 = torch.float8_e4m3fn
print(json.dumps({"record": "header", "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                  "has_scaled_grouped_mm": hasattr(torch, "_scaled_grouped_mm")}), flush=True)
pairs = ((2048, 768), (2048, 1408), (4096, 2048), (7168, 2048), (4096, 2880))
for g in (8, 16, 32):
    for tpe in (512, 1024, 2048, 4096):
        for h, f in pairs:
            for proj, k, n in (("up", h, f), ("down", f, h)):
                m = g * tpe
                flop = 2 * m * n * k
                rec = {"record": "fp8_grouped", "experts": g, "tokens_per_expert": tpe, "hidden": h, "expert_ffn": f,
                       "proj": proj, "m": m, "n": n, "k": k, "flop": flop}
                try:
                    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16).to(f8)
                    wb = torch.randn(g, n, k, device=dev, dtype=torch.bfloat16).to(f8)
                    b = wb.transpose(-2, -1)  # [G, K, N], column-major in the last two dims
                    offs = torch.arange(1, g + 1, device=dev, dtype=torch.int32) * tpe
                    sa = torch.ones(m, device=dev, dtype=torch.float32)
                    sb = torch.ones(g, n, device=dev, dtype=torch.float32)
                    # dense FP8 of the same M, N, K: per-tensor scales (the fit's FP8 GEMM points) and row-wise
                    wd = torch.randn(n, k, device=dev, dtype=torch.bfloat16).to(f8)
                    one = torch.ones((), device=dev, dtype=torch.float32)
                    td = tm.time(lambda: torch._scaled_mm(a, wd.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                    sar = torch.ones(m, 1, device=dev, dtype=torch.float32)
                    sbr = torch.ones(1, n, device=dev, dtype=torch.float32)
                    try:
                        tdr = tm.time(lambda: torch._scaled_mm(a, wd.t(), scale_a=sar, scale_b=sbr, out_dtype=torch.bfloat16))
                        rec["dense_rowwise_time_us"] = round(tdr[0], 3)
                    except Exception as e:
                        rec["dense_rowwise_error"] = str(e)[:200]
                    rec["dense_time_us"] = round(td[0], 3)
                    rec["dense_TFLOPS"] = round(flop / td[0] / 1e6, 1)
                    fn = lambda: torch._scaled_grouped_mm(a, b, sa, sb, offs=offs, out_dtype=torch.bfloat16)
                    out = fn()
                    torch.cuda.synchronize()
                    t = tm.time(fn)
                    rec["grouped_time_us"] = round(t[0], 3)
                    rec["grouped_TFLOPS"] = round(flop / t[0] / 1e6, 1)
                    rec["ratio_to_dense"] = round(td[0] / t[0], 4)
                    if "dense_rowwise_time_us" in rec:
                        rec["ratio_to_dense_rowwise"] = round(rec["dense_rowwise_time_us"] / t[0], 4)
                    # bf16 grouped of the same shape, for the bf16/fp8 comparison on one machine
                    ab, bb = a.to(torch.bfloat16), wb.to(torch.bfloat16).transpose(-2, -1)
                    tb = tm.time(lambda: torch._grouped_mm(ab, bb, offs=offs, out_dtype=torch.bfloat16))
                    rec["bf16_grouped_time_us"] = round(tb[0], 3)
                    # spot check expert 0
                    ref = (a[:tpe].to(torch.float32) @ wb[0].to(torch.float32).t())
                    rec["max_rel_err"] = round(float(((out[:tpe].float() - ref).abs().max() / ref.abs().max())), 5)
                except Exception as e:
                    rec["error"] = (type(e).__name__ + ": " + str(e))[:300]
                print(json.dumps(rec), flush=True)
                a = wb = b = wd = None
                torch.cuda.empty_cache()
