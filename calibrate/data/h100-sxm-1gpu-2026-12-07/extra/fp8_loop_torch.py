# Exploratory (session 49; run from the checkout root as `python3 calibrate/data/h100-sxm-1gpu-2026-12-07/extra/fp8_loop_torch.py`, output fp8_loop_torch.jsonl beside it): which training packages the lent machine has (first line), then
# a loop of one torch._scaled_mm per expert (FP8 e4m3, per-tensor scales, one stream) on compute_torch.py's 120 grouped shapes against one dense FP8 GEMM of the same FLOPs.
import json, sys, importlib.util
import torch
sys.path.insert(0, "calibrate/probes")
out = {"torch": torch.__version__}
for mod in ("transformer_engine", "transformer_engine.pytorch", "megatron", "deep_ep", "triton", "apex", "flash_attn"):
    try:
        m = __import__(mod, fromlist=["x"])
        out[mod] = getattr(m, "__version__", "present")
    except Exception as e:
        out[mod] = "absent: " + type(e).__name__
print(json.dumps(out), flush=True)
spec = importlib.util.spec_from_file_location("ct", "calibrate/probes/compute_torch.py")
ct = importlib.util.module_from_spec(spec); spec.loader.exec_module(ct)
tm = ct.Timer(torch, 15, 3)
dev = torch.device("cuda"); f8 = torch.float8_e4m3fn
one = torch.ones((), device=dev, dtype=torch.float32)
pairs = ((2048, 768), (2048, 1408), (4096, 2048), (7168, 2048), (4096, 2880))
for g in (8, 16, 32):
    for tpe in (512, 1024, 2048, 4096):
        for h, f in pairs:
            for proj, k, n in (("up", h, f), ("down", f, h)):
                m = g * tpe
                a = torch.randn(m, k, device=dev, dtype=torch.bfloat16).to(f8)
                w = torch.randn(g, n, k, device=dev, dtype=torch.bfloat16).to(f8)
                wd = torch.randn(n, k, device=dev, dtype=torch.bfloat16).to(f8)
                o = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
                td = tm.time(lambda: torch._scaled_mm(a, wd.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                def loop():
                    for i in range(g):
                        o[i * tpe:(i + 1) * tpe] = torch._scaled_mm(a[i * tpe:(i + 1) * tpe], w[i].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                tl = tm.time(loop)
                print(json.dumps({"record": "fp8_loop", "experts": g, "tokens_per_expert": tpe, "hidden": h, "expert_ffn": f, "proj": proj,
                                  "dense_time_us": round(td[0], 3), "loop_time_us": round(tl[0], 3), "ratio_to_dense": round(td[0] / tl[0], 4),
                                  "loop_unqueued_us": round(tl[4], 3)}), flush=True)
                a = w = wd = o = None
                torch.cuda.empty_cache()
