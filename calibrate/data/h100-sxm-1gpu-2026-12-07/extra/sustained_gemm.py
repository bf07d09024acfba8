# Exploratory (session 49; run from the checkout root as `python3 calibrate/data/h100-sxm-1gpu-2026-12-07/extra/sustained_gemm.py`, output sustained_gemm.jsonl beside it): one GPU's GEMM rate under
# sustained load. bf16 and FP8 8192^3 products back to back for 20 s each, timed in 0.5 s windows (CUDA events),
# with nvidia-smi's SM clock, power and throttle reasons sampled at each window's end.
import json, subprocess, time
import torch
dev = torch.device("cuda")
def smi():
    try:
        o = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=5).stdout.strip()
        c, p, t, r = [x.strip() for x in o.split(",")]
        return {"sm_clock_MHz": float(c), "power_W": float(p), "temperature_C": float(t), "throttle_reasons": r}
    except Exception as e:
        return {"smi_error": str(e)[:100]}
print(json.dumps({"record": "header", "device": torch.cuda.get_device_name(0), "torch": torch.__version__}), flush=True)
n = 8192
a = torch.randn(n, n, device=dev, dtype=torch.bfloat16); w = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
o = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn); one = torch.ones((), device=dev, dtype=torch.float32)
ops = {"bf16": (lambda: torch.mm(a, w.t(), out=o), 989.4e12),
       "fp8_e4m3": (lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 1978.9e12)}
for dtype, (fn, peak) in ops.items():
    time.sleep(10)  # cool down between the two
    t_end = time.time() + 20
    k = 0
    while time.time() < t_end:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        reps = 0
        e0.record()
        t0 = time.time()
        while time.time() - t0 < 0.5:
            for _ in range(20):
                fn()
            reps += 20
            torch.cuda.synchronize() if reps % 200 == 0 else None
        e1.record(); torch.cuda.synchronize()
        ms = e0.elapsed_time(e1)
        flops = 2 * n ** 3 * reps / (ms * 1e-3)
        rec = {"record": "window", "dtype": dtype, "window": k, "products": reps, "time_ms": round(ms, 3),
               "TFLOPS": round(flops / 1e12, 1), "fraction_of_peak": round(flops / peak, 4)}
        rec.update(smi())
        print(json.dumps(rec), flush=True)
        k += 1
