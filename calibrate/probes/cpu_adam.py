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
usage: python3 cpu_adam.py [--params 268435456] [--reps 5] [--threads N] [--impls default,foreach,fused] [--no-stream]
Several ranks at once (Megatron's 8 a node, each with its own CPU optimizer): start N copies together, e.g.
  at=$(python3 -c 'import time; print(time.time() + 20)')
  for r in $(seq 8); do python3 cpu_adam.py --threads 1 --impls fused --no-stream --start-at $at > rank$r.jsonl & done; wait
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


def best_seconds(fn, reps, start_at=None):
    """The fastest of `reps` calls after a warm-up one; with `start_at` (a time.time() value) the timed calls wait
    for it, so that copies started together time their steps together, and the mean is returned instead: with
    several processes at once the fastest step may be one that ran while the others were still starting."""
    fn()  # first touch and warm-up
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times) if start_at is not None else min(times)


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
    ap.add_argument("--threads", type=positive, default=None,
                    help="torch threads (default: torch's count and half of it); 1 is what each rank of a torchrun job gets "
                         "(torchrun sets OMP_NUM_THREADS=1 when it starts several processes)")
    ap.add_argument("--impls", default="default,foreach,fused", help="comma-separated AdamW implementations to time")
    ap.add_argument("--no-stream", action="store_true", help="leave out the copy and add kernels")
    ap.add_argument("--start-at", type=float, default=None,
                    help="a time.time() value: the timed Adam steps start then, and their mean is reported (copies run together)")
    a = ap.parse_args()
    impls = [i for i in a.impls.split(",") if i]
    if not impls or any(i not in ("default", "foreach", "fused") for i in impls):
        ap.error("--impls takes default, foreach and fused, comma-separated")
    try:
        import torch as _torch
    except ImportError:
        skip("cpu_adam", "torch not available")
    torch = _torch
    cores = os.cpu_count() or 1
    header("cpu_adam", extra={"cpu": cpu_model(), "logical_cpus": cores, "torch_version": torch.__version__,
                              "threads_default": torch.get_num_threads(), "params": a.params})
    n = a.params
    counts = [a.threads] if a.threads else sorted({torch.get_num_threads(), max(1, torch.get_num_threads() // 2)}, reverse=True)
    for threads in counts:
        torch.set_num_threads(threads)
        if not a.no_stream:
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
        for impl in impls:
            p = torch.nn.Parameter(torch.rand(n, dtype=torch.float32))
            p.grad = torch.rand(n, dtype=torch.float32) * 1e-3
            kw = {} if impl == "default" else {impl: True}
            try:
                opt = torch.optim.AdamW([p], lr=1e-4, weight_decay=0.1, **kw)
                s = best_seconds(opt.step, a.reps, a.start_at)
            except Exception as e:  # an implementation this torch lacks on the CPU
                emit({"record": "adam", "impl": impl, "threads": threads, "error": str(e)[:200]})
                continue
            emit({"record": "adam", "impl": impl, "threads": threads, "params": n, "seconds": round(s, 6),
                  "timing": "best" if a.start_at is None else "mean from start_at",
                  "params_per_s": round(n / s, 1), "GBps_at_28B": round(28 * n / s / 1e9, 2)})
            del opt, p


if __name__ == "__main__":
    main()
