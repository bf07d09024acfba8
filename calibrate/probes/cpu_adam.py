#!/usr/bin/env python3
"""cpu_adam.py: how fast the host CPU runs an Adam step, against its memory bandwidth.

Megatron's optimizer offload (`optimizer_cpu_offload`, megatron/core/optimizer/cpu_offloading/
hybrid_optimizer.py, HybridDeviceOptimizer) keeps the offloaded parameters' fp32 copy and Adam moments in host
memory and steps them with a torch CPU optimizer (torch.optim.AdamW in its own docstring's example), so the time it
adds to a training step is the host CPU's Adam, not a stream of states over C2C or PCIe. racksim's planner prices
it as bytes of Adam traffic (28 B a parameter: read the fp32 parameter, gradient and two moments, write back the
parameter and the moments) at a fraction of the host's memory bandwidth; this probe measures that fraction on the
machine it runs on: a STREAM-like copy and add with torch on the CPU (the bandwidth), then AdamW steps over N fp32
parameters (the rate), with the default, foreach and fused implementations, on all cores and on half of them.

One JSON record per line on stdout: a header (CPU model, cores, torch), "stream" records, "adam" records.
usage: python3 cpu_adam.py [--params 268435456] [--reps 5]
"""
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_json import OneLineParser, emit, header, skip  # noqa: E402

torch = None  # imported in main(): without it the probe says "skipped" and exits 0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def best_seconds(fn, reps):
    fn()  # first touch and warm-up
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(text)
    return v


def main():
    global torch
    ap = OneLineParser(probe="cpu_adam", description="host CPU Adam rate against its memory bandwidth")
    ap.add_argument("--params", type=positive, default=1 << 28, help="fp32 parameters in the Adam step (default 2^28: 1 GiB each tensor)")
    ap.add_argument("--reps", type=positive, default=5)
    a = ap.parse_args()
    try:
        import torch as _torch
    except ImportError:
        skip("cpu_adam", "torch not available")
    torch = _torch
    cores = os.cpu_count() or 1
    header("cpu_adam", extra={"cpu": cpu_model(), "logical_cpus": cores, "torch_version": torch.__version__,
                              "threads_default": torch.get_num_threads(), "params": a.params})
    n = a.params
    for threads in sorted({torch.get_num_threads(), max(1, torch.get_num_threads() // 2)}, reverse=True):
        torch.set_num_threads(threads)
        x = torch.rand(n, dtype=torch.float32)
        y = torch.rand(n, dtype=torch.float32)
        z = torch.empty(n, dtype=torch.float32)
        s = best_seconds(lambda: z.copy_(x), a.reps)
        emit({"record": "stream", "kernel": "copy", "threads": threads, "bytes": 8 * n, "seconds": round(s, 6),
              "GBps": round(8 * n / s / 1e9, 2)})
        s = best_seconds(lambda: torch.add(x, y, out=z), a.reps)
        emit({"record": "stream", "kernel": "add", "threads": threads, "bytes": 12 * n, "seconds": round(s, 6),
              "GBps": round(12 * n / s / 1e9, 2)})
        del x, y, z
        for impl in ("default", "foreach", "fused"):
            p = torch.nn.Parameter(torch.rand(n, dtype=torch.float32))
            p.grad = torch.rand(n, dtype=torch.float32) * 1e-3
            kw = {} if impl == "default" else {impl: True}
            try:
                opt = torch.optim.AdamW([p], lr=1e-4, weight_decay=0.1, **kw)
                s = best_seconds(opt.step, a.reps)
            except Exception as e:  # an implementation this torch lacks on the CPU
                emit({"record": "adam", "impl": impl, "threads": threads, "error": str(e)[:200]})
                continue
            emit({"record": "adam", "impl": impl, "threads": threads, "params": n, "seconds": round(s, 6),
                  "params_per_s": round(n / s, 1), "GBps_at_28B": round(28 * n / s / 1e9, 2)})
            del opt, p


if __name__ == "__main__":
    main()
