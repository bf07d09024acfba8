#!/usr/bin/env python3
"""compute_torch.py: compute efficiencies of one GPU through PyTorch, for the training-throughput planner.

    python3 calibrate/probes/compute_torch.py [--quick] [--sections gemm,grouped_gemm,attention,elementwise,launch]

Sections (each a record kind; units in key names, as in the other probes):
  gemm          bf16 torch.mm and FP8 e4m3 torch._scaled_mm (per-tensor fp32 scales, bf16 output, with and
                without fast accumulation), nn.Linear layout: a [M,K] row-major times w.t() of a row-major
                w [N,K]. Squares 2048..16384 and transformer shapes (M = tokens, N/K from hidden and FFN).
                TFLOPS = 2MNK / time; fraction_of_peak against the datasheet dense peak.
  grouped_gemm  MoE expert GEMMs: G experts, equal token counts, torch._grouped_mm (bf16, 2D x 3D with
                offsets) and, for comparison, a loop of G torch.mm calls; ratio_to_dense = dense time / grouped
                time, where dense is one torch.mm of M = G x tokens with the same K, N (same FLOPs).
  attention     scaled_dot_product_attention, bf16, causal, cuDNN and flash backends, forward and
                forward+backward. FLOPs (FlashAttention convention): forward 4*b*h*s*s*d / 2 (causal: half
                the square), backward 2.5 x forward, so forward+backward 3.5 x forward.
  elementwise   unfused HBM-bound ops on a bf16 [tokens x hidden] tensor; bytes = what the op's kernels read
                and write as counted per op (see ELEMENTWISE below), bytes_ideal = one read of each input
                and one write of each output (what a fused kernel would move).
  launch        per-kernel floor: a tiny GEMM and a one-element add, 1000 back to back without a sync
                (eager: each a Python call; cuda_graph: captured once, one replay), time per op.

Timing: CUDA events around each repetition after warm-up; time_us is the median of `iters` repetitions,
time_min_us / time_max_us the extremes, with the GPU's queue filled first (a torch.cuda._sleep spin before
each repetition, so the host's launch time is hidden: GPU time, see Timer); time_unqueued_us is the median
with an idle GPU (includes the host's dispatch where that is slower, as for short ops). launch uses
neither: it times 1000 back-to-back ops. Nothing on the GPU is changed (clocks, power): a gpu_state record
after each section reads nvidia-smi (SM clock, power, temperature) if it is there.

Output: JSON lines on stdout: header, data records, gpu_state records, end. Without torch or without a GPU
it prints the header and a "skipped" record and exits 0. A backend or shape that fails gives a "skipped"
record with "scope":"measurement" and the error text, and the run goes on. Bad arguments: one line on
stderr, exit 2.
"""

import os
import statistics
import subprocess
import sys
import time

import probe_json  # this directory: the Python probes' shared JSON lines
from probe_json import emit

PROBE = "compute_torch"


def header(extra=None, device=None, torch=None):
    probe_json.header(PROBE, extra, device, torch)


def skip(reason, detail=None, **hdr):
    probe_json.skip(PROBE, reason, detail, **hdr)


SECTIONS = ("gemm", "grouped_gemm", "attention", "elementwise", "launch")

# Datasheet dense peaks (no sparsity), TFLOP/s, and an HBM peak, GB/s. H100 SXM and H200 share the
# compute peaks; the H200's HBM figure is the attribute peak 2 x 3201 MHz x 6016 bit / 8 of
# calibrate/data/h200-pcie-1gpu-2026-11-29 (device_attributes.jsonl), the H100 SXM's the datasheet 3.35 TB/s.
PEAKS = {
    "H200": {"bf16_TFLOPS": 989.4, "fp8_TFLOPS": 1978.9, "hbm_GBps": 4814.3,
             "source": "H100/H200 SXM datasheet dense bf16 989.4, fp8 1978.9 TFLOP/s; HBM 4814.3 GB/s "
                       "= 2 x 3201 MHz x 6016 bit / 8 (device attributes, H200)"},
    "H100 80GB HBM3": {"bf16_TFLOPS": 989.4, "fp8_TFLOPS": 1978.9, "hbm_GBps": 3350.0,
                       "source": "H100 SXM datasheet dense bf16 989.4, fp8 1978.9 TFLOP/s, HBM 3.35 TB/s"},
}


def log(msg):
    print(f"{PROBE}: {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = probe_json.OneLineParser(probe=PROBE, prog="compute_torch.py", description=__doc__.split("\n")[0])
    p.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated subset of " + ",".join(SECTIONS))
    p.add_argument("--quick", action="store_true", help="tiny shapes, few repetitions (a smoke test in seconds)")
    p.add_argument("--iters", type=int, default=None, help="timed repetitions per point (default 15, quick 3)")
    p.add_argument("--warmup", type=int, default=None, help="untimed repetitions first (default 3, quick 1)")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--peak-bf16-TFLOPS", dest="peak_bf16", type=float, default=None,
                   help="override the dense bf16 peak (default: by device name, H100 SXM / H200)")
    p.add_argument("--peak-fp8-TFLOPS", dest="peak_fp8", type=float, default=None)
    p.add_argument("--peak-hbm-GBps", dest="peak_hbm", type=float, default=None)
    a = p.parse_args(argv)
    a.sections = [s.strip() for s in a.sections.split(",") if s.strip()]
    bad = [s for s in a.sections if s not in SECTIONS]
    if bad or not a.sections:
        p.error(f"unknown section(s) {bad}; valid: {','.join(SECTIONS)}")
    if a.iters is None:
        a.iters = 3 if a.quick else 15
    if a.warmup is None:
        a.warmup = 1 if a.quick else 3
    if a.iters < 1 or a.warmup < 0:
        p.error("--iters must be >= 1 and --warmup >= 0")
    if a.device < 0:
        p.error("--device must be >= 0")
    for v in (a.peak_bf16, a.peak_fp8, a.peak_hbm):
        if v is not None and not v > 0:
            p.error("peaks must be positive")
    return a


def skip_measurement(section, what, err):
    msg = f"{type(err).__name__}: {err}".replace("\n", " ")[:600]
    rec = {"record": "skipped", "scope": "measurement", "section": section, "reason": "failed", "error": msg}
    rec.update(what)
    emit(rec)
    log(f"{section} {what}: failed: {msg[:200]}")


def package_versions():
    """Versions of the CUDA library wheels torch loads (cuBLAS, cuDNN), where pip installed them."""
    out = {}
    try:
        from importlib import metadata
        for d in metadata.distributions():
            name = (d.metadata.get("Name") or "").lower()
            if name.startswith(("nvidia-cublas", "nvidia-cudnn", "nvidia-cuda-runtime", "nvidia-nccl")):
                out[name] = d.version
    except Exception:
        pass
    return out


def loaded_libraries():
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(path)
                if base.startswith(("libcublas", "libcudnn.", "libcudnn_", "libcudart")):
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def gpu_state(section):
    q = "clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"
    rec = {"record": "gpu_state", "after": section}
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits", "-i",
                            os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]],
                           capture_output=True, text=True, timeout=20)
        vals = [v.strip() for v in r.stdout.strip().splitlines()[0].split(",")] if r.returncode == 0 else []
    except Exception:
        vals = []
    if len(vals) == 5:
        def num(v):
            try:
                return float(v)
            except ValueError:
                return None
        rec.update({"sm_clock_MHz": num(vals[0]), "mem_clock_MHz": num(vals[1]), "power_W": num(vals[2]),
                    "temperature_C": num(vals[3]), "throttle_reasons": vals[4]})
    else:
        rec["note"] = "nvidia-smi query unavailable"
    emit(rec)


def r3(x):
    return None if x is None else round(x, 3)


def r4(x):
    return None if x is None else round(x, 4)


class Timer:
    """Two timings of each point, both GPU time between a pair of CUDA events per repetition:

    queued (time_us, time_min_us, time_max_us): before each repetition a spin kernel (torch.cuda._sleep)
        holds the GPU for about twice the host's time to enqueue one repetition, so the host has queued the
        whole repetition before the GPU reaches the first event: the GPU's own time, as in a training step
        whose CPU runs ahead. Without torch.cuda._sleep this falls back to the unqueued timing.
    unqueued (time_unqueued_us): the same with an idle GPU: the GPU waits for each launch, so where the
        host's dispatch is slower than the kernels this is the host's time (short ops).
    """

    def __init__(self, torch, iters, warmup):
        self.torch, self.iters, self.warmup = torch, iters, warmup
        self.sleep = getattr(torch.cuda, "_sleep", None)

    def _run(self, fn, iters, sleep_cycles):
        torch = self.torch
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
        torch.cuda.synchronize()
        for e0, e1 in ev:
            if sleep_cycles:
                self.sleep(sleep_cycles)
            e0.record()
            fn()
            e1.record()
        torch.cuda.synchronize()
        return [e0.elapsed_time(e1) * 1e3 for e0, e1 in ev]

    def time(self, fn, iters=None, warmup=None, queued=True):
        """(median, min, max, iters, unqueued median) in us; median/min/max queued where possible."""
        torch = self.torch
        iters = self.iters if iters is None else iters
        warmup = self.warmup if warmup is None else warmup
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()  # the host's time to enqueue one warm repetition
        fn()
        host_s = time.perf_counter() - t0
        torch.cuda.synchronize()
        unq = self._run(fn, iters, 0)
        if not queued or self.sleep is None:
            return statistics.median(unq), min(unq), max(unq), iters, statistics.median(unq)
        # 2 GHz is above every Hopper SM clock, so the spin lasts at least this long
        cycles = int(min(2 * host_s + 50e-6, 0.05) * 2.0e9)
        ts = self._run(fn, iters, cycles)
        return statistics.median(ts), min(ts), max(ts), iters, statistics.median(unq)


def timing_fields(t):
    med, lo, hi, n, unq = t
    return {"time_us": r3(med), "time_min_us": r3(lo), "time_max_us": r3(hi), "iters": n,
            "time_unqueued_us": r3(unq)}


def frac(value, peak):
    return r4(value / peak) if (value is not None and peak) else None


# ------------------------------------------------------------------------------------------------ gemm
def gemm_shapes(quick):
    if quick:
        return [("square", 1024, 1024, 1024), ("square", 2048, 2048, 2048), ("transformer", 2048, 4096, 1024)]
    shapes = [("square", s, s, s) for s in (2048, 4096, 8192, 16384)]
    for m in (4096, 8192, 16384):
        for h, f in ((4096, 14336), (8192, 28672)):
            shapes += [("transformer", m, h, h), ("transformer", m, f, h), ("transformer", m, h, f)]
    return shapes


def spot_check(torch, out, a, w):
    """max |out - ref| / max |ref| on a 64x64 corner, ref in float64 from the operands as stored."""
    r = min(64, out.shape[0])
    c = min(64, out.shape[1])
    ref = a[:r].double() @ w[:c].double().t()
    got = out[:r, :c].double()
    den = ref.abs().max().item()
    return (got - ref).abs().max().item() / den if den > 0 else None


def run_gemm(torch, tm, peaks):
    dev = torch.device("cuda")
    has_scaled = hasattr(torch, "_scaled_mm")
    fp8 = getattr(torch, "float8_e4m3fn", None)
    for label, m, n, k in gemm_shapes(tm.quick):
        flop = 2 * m * n * k
        try:
            a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
            w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        except Exception as e:
            skip_measurement("gemm", {"m": m, "n": n, "k": k}, e)
            continue
        variants = [("bf16", None)]
        if has_scaled and fp8 is not None:
            variants += [("fp8_e4m3", False), ("fp8_e4m3", True)]
        for dtype, fast in variants:
            what = {"dtype": dtype, "m": m, "n": n, "k": k}
            try:
                if dtype == "bf16":
                    wt = w.t()
                    out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
                    fn = lambda: torch.mm(a, wt, out=out)
                    aa, ww = a, w
                    api, peak = "torch.mm", peaks.get("bf16_TFLOPS")
                else:
                    aa = a.to(fp8)
                    ww = w.to(fp8)
                    wt = ww.t()  # column-major second operand, as Hopper's FP8 GEMM needs
                    sa = torch.tensor(1.0, device=dev, dtype=torch.float32)
                    sb = torch.tensor(1.0, device=dev, dtype=torch.float32)
                    fn = lambda: torch._scaled_mm(aa, wt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                                  use_fast_accum=fast)
                    api, peak = "torch._scaled_mm", peaks.get("fp8_TFLOPS")
                out = fn()
                torch.cuda.synchronize()
                err = spot_check(torch, out, aa, ww)
                t = tm.time(fn)
                tf = flop / (t[0] * 1e-6) / 1e12
                rec = {"record": "gemm", "dtype": dtype, "api": api, "accumulate": "fp32", "c_dtype": "bf16",
                       "layout": "a [M,K] row-major x w.t(), w [N,K] row-major (nn.Linear)"}
                if dtype != "bf16":
                    rec.update({"scales": "per-tensor fp32 (1.0)", "fast_accum": fast})
                rec.update({"shape": label, "m": m, "n": n, "k": k, "flop": flop})
                rec.update(timing_fields(t))
                rec.update({"TFLOPS": round(tf, 2), "peak_TFLOPS": peak, "fraction_of_peak": frac(tf, peak),
                            "max_rel_err": None if err is None else round(err, 6),
                            "check": "ok" if err is not None and err < 2e-2 else "FAILED"})
                emit(rec)
                out = None
            except Exception as e:
                skip_measurement("gemm", dict(what, fast_accum=fast) if fast is not None else what, e)
        a = w = None  # free before the next shape (closures hold the names)
        torch.cuda.empty_cache()
        log(f"gemm {m}x{n}x{k} done")
    if not has_scaled or fp8 is None:
        emit({"record": "skipped", "scope": "measurement", "section": "gemm", "dtype": "fp8_e4m3",
              "reason": "torch has no _scaled_mm or float8_e4m3fn"})


# ---------------------------------------------------------------------------------------- grouped_gemm
def grouped_configs(quick):
    if quick:
        return [(4, 256, 1024, 512)]
    cfgs = []
    # (hidden, expert FFN): Qwen3-30B-A3B-like 2048/768, DeepSeek-V2-Lite-like 2048/1408,
    # Mixtral-ish small 4096/2048, DeepSeek-V3-like 7168/2048, gpt-oss-like 4096/2880 (hidden rounded to 4096)
    pairs = ((2048, 768), (2048, 1408), (4096, 2048), (7168, 2048), (4096, 2880))
    for g in (8, 16, 32):
        for tpe in (512, 1024, 2048, 4096):
            for h, f in pairs:
                cfgs.append((g, tpe, h, f))
    return cfgs


def run_grouped(torch, tm, peaks):
    dev = torch.device("cuda")
    has_grouped = hasattr(torch, "_grouped_mm")
    peak = peaks.get("bf16_TFLOPS")
    if not has_grouped:
        emit({"record": "skipped", "scope": "measurement", "section": "grouped_gemm", "impl": "torch._grouped_mm",
              "reason": f"torch {torch.__version__} has no _grouped_mm; only the loop of torch.mm is measured"})
    dense_cache = {}
    for g, tpe, h, f in grouped_configs(tm.quick):
        for proj, k, n in (("up", h, f), ("down", f, h)):
            m = g * tpe
            flop = 2 * m * n * k
            what = {"experts": g, "tokens_per_expert": tpe, "hidden": h, "expert_ffn": f, "proj": proj}
            try:
                a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                # expert weights stored [G, N, K] row-major (nn.Linear per expert); the 3D operand is its
                # transpose [G, K, N], column-major in the last two dims
                wb = torch.randn(g, n, k, device=dev, dtype=torch.bfloat16)
                b = wb.transpose(-2, -1)
                offs = (torch.arange(1, g + 1, device=dev, dtype=torch.int32) * tpe)
                key = (m, n, k)
                if key not in dense_cache:
                    wd = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
                    od = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
                    dense_cache.clear()
                    dense_cache[key] = tm.time(lambda: torch.mm(a, wd.t(), out=od))
                    wd = od = None
                td = dense_cache[key]
                impls = []
                if has_grouped:
                    impls.append(("torch._grouped_mm", lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)))
                outl = torch.empty(m, n, device=dev, dtype=torch.bfloat16)

                def loop():
                    for i in range(g):
                        torch.mm(a[i * tpe:(i + 1) * tpe], b[i], out=outl[i * tpe:(i + 1) * tpe])
                impls.append(("loop of torch.mm", loop))
                for impl, fn in impls:
                    try:
                        out = fn()
                        if out is None:
                            out = outl
                        torch.cuda.synchronize()
                        err = spot_check(torch, out, a, wb[0])  # rows of expert 0 against its weights
                        t = tm.time(fn)
                        tf = flop / (t[0] * 1e-6) / 1e12
                        tfd = flop / (td[0] * 1e-6) / 1e12
                        rec = {"record": "grouped_gemm", "impl": impl, "dtype": "bf16"}
                        rec.update(what)
                        rec.update({"m": m, "n": n, "k": k, "flop": flop})
                        rec.update(timing_fields(t))
                        rec.update({"TFLOPS": round(tf, 2), "fraction_of_peak": frac(tf, peak),
                                    "dense_time_us": r3(td[0]), "dense_TFLOPS": round(tfd, 2),
                                    "ratio_to_dense": r4(td[0] / t[0]),
                                    "ratio_to_dense_unqueued": r4(td[4] / t[4]),
                                    "max_rel_err": None if err is None else round(err, 6),
                                    "check": "ok" if err is not None and err < 2e-2 else "FAILED"})
                        emit(rec)
                    except Exception as e:
                        skip_measurement("grouped_gemm", dict(what, impl=impl), e)
                a = wb = b = outl = None
            except Exception as e:
                skip_measurement("grouped_gemm", what, e)
        torch.cuda.empty_cache()
    log("grouped_gemm done")


# ------------------------------------------------------------------------------------------- attention
def attention_configs(quick):
    if quick:
        return [(1, 1024, 8, 8, 128), (1, 1024, 8, 2, 64)]
    cfgs = []
    for s in (4096, 8192):
        for b in (1, 2):
            for hq, hkv, d in ((32, 32, 128), (64, 64, 128), (64, 64, 64), (64, 8, 128)):
                cfgs.append((b, s, hq, hkv, d))
    return cfgs


def run_attention(torch, tm, peaks):
    import torch.nn.functional as F
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:
        skip_measurement("attention", {}, e)
        return
    dev = torch.device("cuda")
    peak = peaks.get("bf16_TFLOPS")
    backends = [("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION")]
    for name, enum_name in backends:
        be = getattr(SDPBackend, enum_name, None)
        if be is None:
            emit({"record": "skipped", "scope": "measurement", "section": "attention", "backend": name,
                  "reason": f"SDPBackend has no {enum_name}"})
            continue
        for b, s, hq, hkv, d in attention_configs(tm.quick):
            what = {"backend": name, "batch": b, "seq": s, "heads": hq, "kv_heads": hkv, "head_dim": d}
            fwd_flop = 4 * b * hq * s * s * d // 2
            try:
                q = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                go = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16)
            except Exception as e:
                skip_measurement("attention", what, e)
                continue
            gqa_mode = "none" if hq == hkv else "enable_gqa"

            def attn(gqa_mode):
                if gqa_mode == "enable_gqa":
                    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                if gqa_mode == "expanded":
                    r = hq // hkv
                    return lambda: F.scaled_dot_product_attention(
                        q, k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1), is_causal=True)
                return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)

            gqa_error = None
            with sdpa_kernel([be]):
                fwd = attn(gqa_mode)
                try:
                    with torch.no_grad():
                        fwd()
                    torch.cuda.synchronize()
                except Exception as e:
                    if gqa_mode == "enable_gqa":
                        gqa_error = f"{type(e).__name__}: {e}".replace("\n", " ")[:300]
                        gqa_mode = "expanded"
                        fwd = attn(gqa_mode)
                for mode in ("fwd", "fwd_bwd"):
                    try:
                        if mode == "fwd":
                            def fn():
                                with torch.no_grad():
                                    fwd()
                            flop = fwd_flop
                        else:
                            def fn():
                                o = fwd()
                                torch.autograd.grad(o, (q, k, v), go)
                            flop = fwd_flop * 7 // 2
                        t = tm.time(fn)
                        tf = flop / (t[0] * 1e-6) / 1e12
                        rec = {"record": "attention", "backend": name, "mode": mode, "dtype": "bf16", "causal": True,
                               "batch": b, "seq": s, "heads": hq, "kv_heads": hkv, "head_dim": d, "gqa": gqa_mode}
                        if gqa_error:
                            rec["gqa_note"] = ("enable_gqa failed; k/v expanded with repeat_interleave inside the "
                                               "timed call: " + gqa_error)
                        rec.update({"flop": flop,
                                    "flop_convention": "fwd 4*b*h*s*s*d/2 (causal); bwd 2.5 x fwd (FlashAttention)"})
                        rec.update(timing_fields(t))
                        rec.update({"TFLOPS": round(tf, 2), "peak_TFLOPS": peak, "fraction_of_peak": frac(tf, peak)})
                        emit(rec)
                    except Exception as e:
                        skip_measurement("attention", dict(what, mode=mode, gqa=gqa_mode), e)
            q = k = v = go = None
            torch.cuda.empty_cache()
        log(f"attention {name} done")


# ----------------------------------------------------------------------------------------- elementwise
# op: (description of the kernels and their traffic in units of N = tokens x hidden elements, bytes per
# element of each kernel's reads + writes; ideal = one read of each input + one write of each output)
ELEMENTWISE = {
    "copy":       ("y = x.clone(): 1 kernel, read 2N + write 2N", 4, 4, 1),
    "add":        ("y = a + b: 1 kernel, read 4N + write 2N", 6, 6, 1),
    "mul":        ("y = a * b: 1 kernel, read 4N + write 2N", 6, 6, 1),
    "swiglu":     ("y = F.silu(gate) * up: 2 kernels, silu read 2N + write 2N, mul read 4N + write 2N", 10, 6, 2),
    "rmsnorm":    ("Llama-style, unfused: xf = x.float() (2N+4N); var = xf.pow(2).mean(-1) (pow 4N+4N, mean 4N); "
                   "rsqrt(var + eps) (per row, ~0); y = xf * r (4N+4N); y.to(bf16) (4N+2N); y * w (2N+2N)",
                   36, 4, 7),
    "cast_fp8":   ("y = x.to(torch.float8_e4m3fn): 1 kernel, read 2N + write 1N", 3, 3, 1),
    "amax":       ("x.abs().amax(): 2 kernels, abs read 2N + write 2N, amax read 2N", 6, 2, 2),
}


def run_elementwise(torch, tm, peaks):
    import torch.nn.functional as F
    dev = torch.device("cuda")
    peak = peaks.get("hbm_GBps")
    shapes = [(1024, 1024), (4096, 1024)] if tm.quick else [(4096, 4096), (8192, 4096), (16384, 8192)]
    fp8 = getattr(torch, "float8_e4m3fn", None)
    for tok, hid in shapes:
        n = tok * hid
        try:
            x = torch.randn(tok, hid, device=dev, dtype=torch.bfloat16)
            y = torch.randn(tok, hid, device=dev, dtype=torch.bfloat16)
            wn = torch.randn(hid, device=dev, dtype=torch.bfloat16)
        except Exception as e:
            skip_measurement("elementwise", {"tokens": tok, "hidden": hid}, e)
            continue

        def rmsnorm():
            xf = x.float()
            var = xf.pow(2).mean(-1, keepdim=True)
            return (xf * torch.rsqrt(var + 1e-6)).to(torch.bfloat16) * wn

        fns = {
            "copy": lambda: x.clone(),
            "add": lambda: x + y,
            "mul": lambda: x * y,
            "swiglu": lambda: F.silu(x) * y,
            "rmsnorm": rmsnorm,
            "cast_fp8": (lambda: x.to(fp8)) if fp8 is not None else None,
            "amax": lambda: x.abs().amax(),
        }
        for op, (desc, bpe, bpe_ideal, kernels) in ELEMENTWISE.items():
            what = {"op": op, "tokens": tok, "hidden": hid}
            if fns[op] is None:
                emit(dict({"record": "skipped", "scope": "measurement", "section": "elementwise",
                           "reason": "torch has no float8_e4m3fn"}, **what))
                continue
            try:
                t = tm.time(fns[op])
                nbytes, ideal = bpe * n, bpe_ideal * n
                gbps = nbytes / (t[0] * 1e-6) / 1e9
                gbps_i = ideal / (t[0] * 1e-6) / 1e9
                rec = {"record": "elementwise", "op": op, "dtype": "bf16", "tokens": tok, "hidden": hid,
                       "elements": n, "kernels": kernels, "bytes": nbytes, "bytes_ideal": ideal, "bytes_counted": desc}
                rec.update(timing_fields(t))
                rec.update({"GBps": round(gbps, 1), "GBps_ideal": round(gbps_i, 1), "peak_GBps": peak,
                            "fraction_of_peak": frac(gbps, peak), "fraction_of_peak_ideal": frac(gbps_i, peak)})
                emit(rec)
            except Exception as e:
                skip_measurement("elementwise", what, e)
        x = y = wn = None
        torch.cuda.empty_cache()
        log(f"elementwise {tok}x{hid} done")


# ---------------------------------------------------------------------------------------------- launch
def run_launch(torch, tm, peaks):
    dev = torch.device("cuda")
    loop = 100 if tm.quick else 1000
    a = torch.randn(128, 128, device=dev, dtype=torch.bfloat16)
    bm = torch.randn(128, 128, device=dev, dtype=torch.bfloat16)
    c = torch.empty(128, 128, device=dev, dtype=torch.bfloat16)
    e = torch.zeros(1, device=dev, dtype=torch.bfloat16)
    ops = {
        "gemm_128_bf16": ("torch.mm(a, b, out=c), 128x128x128 bf16", lambda: torch.mm(a, bm, out=c)),
        "elementwise_1": ("x.add_(1) on a 1-element bf16 tensor", lambda: e.add_(1)),
    }
    for op, (desc, one) in ops.items():
        def body():
            for _ in range(loop):
                one()
        for mode in ("eager", "cuda_graph"):
            try:
                if mode == "eager":
                    fn = body
                else:
                    body()  # warm: cuBLAS picks its kernel outside the capture
                    torch.cuda.synchronize()
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        one()
                    torch.cuda.current_stream().wait_stream(s)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        body()
                    fn = g.replay
                t = tm.time(fn, iters=max(tm.iters, 10) if not tm.quick else tm.iters, queued=False)
                rec = {"record": "launch", "op": op, "what": desc, "mode": mode, "ops_per_repetition": loop,
                       "time_per_op_us": r3(t[0] / loop), "time_per_op_min_us": r3(t[1] / loop),
                       "time_per_op_max_us": r3(t[2] / loop), "iters": t[3],
                       "timing": ("one event pair around %d back-to-back calls, no sync; median of repetitions"
                                  % loop) if mode == "eager" else
                                 ("one event pair around one replay of a CUDA graph of %d ops" % loop)}
                emit(rec)
            except Exception as ex:
                skip_measurement("launch", {"op": op, "mode": mode}, ex)
    log("launch done")


# ------------------------------------------------------------------------------------------------ main
def main(argv):
    args = parse_args(argv)
    t_start = time.monotonic()
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        skip("torch not available", f"{type(e).__name__}: {e}")
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        skip("no CUDA device", "torch.cuda.is_available() is False", torch=torch,
             extra={"device_index": None, "device_count": 0, "torch": torch.__version__})
    if args.device >= torch.cuda.device_count():
        print(f"{PROBE}: --device {args.device} but only {torch.cuda.device_count()} GPU(s)", file=sys.stderr)
        return 2
    torch.cuda.set_device(args.device)
    props = torch.cuda.get_device_properties(args.device)
    name = torch.cuda.get_device_name(args.device)
    peaks = {}
    for key, p in PEAKS.items():
        if key in name:
            peaks = dict(p)
            break
    for k, v in (("bf16_TFLOPS", args.peak_bf16), ("fp8_TFLOPS", args.peak_fp8), ("hbm_GBps", args.peak_hbm)):
        if v is not None:
            peaks[k] = v
            peaks["source"] = "command line"
    try:
        cudnn = torch.backends.cudnn.version()
    except Exception:
        cudnn = None
    header(torch=torch, device=name, extra={
        "device_index": args.device, "device_count": torch.cuda.device_count(),
        "compute_capability": f"{props.major}.{props.minor}", "sm_count": props.multi_processor_count,
        "total_memory_bytes": props.total_memory, "torch": torch.__version__, "cudnn_version": cudnn,
        "packages": package_versions(), "has_scaled_mm": hasattr(torch, "_scaled_mm"),
        "has_grouped_mm": hasattr(torch, "_grouped_mm"),
        "peak_bf16_TFLOPS": peaks.get("bf16_TFLOPS"), "peak_fp8_TFLOPS": peaks.get("fp8_TFLOPS"),
        "peak_hbm_GBps": peaks.get("hbm_GBps"), "peak_source": peaks.get("source"),
        "sections": args.sections, "quick": args.quick, "iters": args.iters, "warmup": args.warmup,
        "timing": ("cudaEvent pair per repetition after warm-up, median; time_us with the GPU queue filled by a "
                   "torch.cuda._sleep spin first (GPU time), time_unqueued_us with an idle GPU (launch: per op of a "
                   "1000-op loop)") if hasattr(torch.cuda, "_sleep") else
                  "cudaEvent pair per repetition after warm-up, median; torch.cuda._sleep missing: time_us unqueued",
    })
    tm = Timer(torch, args.iters, args.warmup)
    tm.quick = args.quick
    runners = {"gemm": run_gemm, "grouped_gemm": run_grouped, "attention": run_attention,
               "elementwise": run_elementwise, "launch": run_launch}
    for sec in SECTIONS:
        if sec not in args.sections:
            continue
        t0 = time.monotonic()
        try:
            runners[sec](torch, tm, peaks)
        except Exception as e:  # a section that breaks as a whole: say so, go on with the next
            skip_measurement(sec, {}, e)
        torch.cuda.synchronize()
        gpu_state(sec)
        log(f"section {sec}: {time.monotonic() - t0:.1f} s")
    emit({"record": "libraries", "loaded": loaded_libraries()})
    emit({"record": "end", "probe": PROBE, "status": "ok", "elapsed_s": round(time.monotonic() - t_start, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
