#!/usr/bin/env python3
"""nccl_sweep.py: NCCL collective sweep through torch.distributed, in nccl-tests conventions.

Launch one process per GPU:
    torchrun --standalone --nproc-per-node N calibrate/probes/nccl_sweep.py --algo ring [--max-bytes 8G]

Ops: all_reduce (sum), all_gather, reduce_scatter (sum), all_to_all, broadcast (root 0), dtype float32 by
default, sizes from --min-bytes (8) to --max-bytes (8 GiB) in x2 steps. NCCL_ALGO is set from --algo
before the process group starts (one algorithm per process: NCCL reads it at communicator creation).

Sizes and bandwidths follow nccl-tests (docs/PERFORMANCE.md there):
  bytes   all_reduce, broadcast: the buffer size; all_gather: the gathered output (count*n elements);
          reduce_scatter: the input (count*n elements); all_to_all: the send buffer of one rank.
  algbw_GBps = bytes / time_us / 1e3;  busbw_GBps = algbw_GBps * factor with factor
          all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast 1.
  time_us: each rank times `iters` back-to-back ops between two CUDA events and divides by iters;
          time_us is the mean of that over ranks (nccl-tests' default), time_max_us the slowest rank.
  --cuda-graph: the `iters` ops are captured once into a CUDA graph and the graph is replayed between
          the events, so the GPU runs them back to back as nccl-tests does. Without it every op is a
          Python call through torch.distributed, and below a few MiB the events time the host's launch
          rate (about 30-45 us a call on the lent H200 VMs), not NCCL.

NVLink multicast must stay off on the lent machines: this script sets NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 before torch is imported, asserts them
before the process group starts, and uses no multicast API.

One rank (torchrun --nproc-per-node 1) runs too: NCCL then exchanges nothing (ncclLaunchOneRank,
src/device/onerank.cu at v2.28.9-1:48-55): an in-place call launches no work, an out-of-place one is one
cudaMemcpyAsync of the buffer. torch's all_reduce and broadcast are in place, its all_gather,
reduce_scatter and all_to_all out of place; every record says which ("in_place").

Output: JSON lines on stdout from rank 0 only: a header record, "check" records, one "collective" record
per (op, size), then an "end" record. Without torch, without a GPU or without torchrun's environment it
prints the header and a "skipped" record and exits 0. Bad arguments: one line on stderr, exit 2.
"""

import argparse
import os
import sys
import time

import probe_json  # this directory: the Python probes' shared JSON lines
from probe_json import emit

PROBE = "nccl_sweep"


def header(extra=None, device=None, torch=None):
    probe_json.header(PROBE, extra, device, torch)


def skip(reason, detail=None, **hdr):
    probe_json.skip(PROBE, reason, detail, **hdr)


# --- NVLink multicast off, before anything can import torch or NCCL --------------------------------
SAFE_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
for _k, _v in SAFE_ENV.items():
    if os.environ.get(_k, _v) != _v:
        print(f"{PROBE}: overriding {_k}={os.environ[_k]} with {_v} (NVLink multicast must stay off)",
              file=sys.stderr)
    os.environ[_k] = _v


def assert_safe_env():
    for k, v in SAFE_ENV.items():
        assert os.environ.get(k) == v, f"{k} must be {v} (is {os.environ.get(k)!r})"


OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
# torch.distributed's calls: all_reduce and broadcast work in place, the others from one buffer into another.
IN_PLACE = ("all_reduce", "broadcast")
DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2}


def busbw_factor(op, n):
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def parse_bytes(s):
    t = s.strip().upper()
    for suf, mul in (("KIB", 1 << 10), ("MIB", 1 << 20), ("GIB", 1 << 30), ("KB", 1 << 10), ("MB", 1 << 20),
                     ("GB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1)):
        if t.endswith(suf):
            t, m = t[: -len(suf)], mul
            break
    else:
        m = 1
    try:
        v = int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte count: {s!r}")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {s!r}")
    return v * m


def parse_args(argv):
    p = probe_json.OneLineParser(probe=PROBE, prog="nccl_sweep.py", description=__doc__.split("\n")[0])
    p.add_argument("--algo", default="ring", help="NCCL_ALGO for this run: ring, tree, or default (NCCL chooses)")
    p.add_argument("--min-bytes", type=parse_bytes, default=8)
    p.add_argument("--max-bytes", type=parse_bytes, default=8 << 30)
    p.add_argument("--ops", default=",".join(OPS), help="comma-separated subset of " + ",".join(OPS))
    p.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    p.add_argument("--iters", type=int, default=20, help="timed ops per size (fewer above 256 MiB)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--cuda-graph", action="store_true",
                   help="time a CUDA graph of `iters` ops (GPU time, no per-call host overhead)")
    a = p.parse_args(argv)
    if a.algo.lower() not in ("ring", "tree", "default"):
        p.error(f"--algo must be ring, tree or default, not {a.algo!r}")
    a.algo = a.algo.lower()
    a.ops = [o.strip() for o in a.ops.split(",") if o.strip()]
    bad = [o for o in a.ops if o not in OPS]
    if bad or not a.ops:
        p.error(f"unknown op(s) {bad}; valid: {','.join(OPS)}")
    if a.min_bytes > a.max_bytes:
        p.error("--min-bytes is larger than --max-bytes")
    if a.iters < 1 or a.warmup < 0:
        p.error("--iters must be >= 1 and --warmup >= 0")
    return a


def nccl_version_string(torch):
    v = torch.cuda.nccl.version()
    if isinstance(v, int):  # older torch: 2.18.1 -> 21801
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return ".".join(map(str, v))


def main(argv):
    args = parse_args(argv)
    t_start = time.monotonic()
    if args.algo != "default":
        os.environ["NCCL_ALGO"] = args.algo
    else:
        os.environ.pop("NCCL_ALGO", None)

    try:
        import torch
        import torch.distributed as dist
    except Exception as e:  # ImportError, or a broken install
        skip("torch not available", f"{type(e).__name__}: {e}")

    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        skip("no CUDA device", "torch.cuda.is_available() is False", torch=torch)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    ngpu = torch.cuda.device_count()
    if "MASTER_ADDR" not in os.environ:
        skip(f"not launched by torchrun (launch with torchrun --standalone --nproc-per-node {ngpu})",
             torch=torch, device=torch.cuda.get_device_name(0),
             extra={"nccl_version": nccl_version_string(torch), "world_size": world})

    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    assert_safe_env()
    dist.init_process_group("nccl", device_id=dev)
    n = dist.get_world_size()
    esize = DTYPES[args.dtype]
    dtype = getattr(torch, args.dtype)
    nccl_ver = nccl_version_string(torch)

    if rank == 0:
        header(torch=torch, device=torch.cuda.get_device_name(dev), extra={
            "nccl_version": nccl_ver, "torch": torch.__version__, "world_size": n, "algo": args.algo,
            "dtype": args.dtype, "min_bytes": args.min_bytes, "max_bytes": args.max_bytes,
            "iters": args.iters, "warmup": args.warmup,
            "timing": ("cuda_graph: iters ops captured in one CUDA graph, one replay between two events"
                       if args.cuda_graph else "eager: iters torch.distributed calls between two events"),
            "env": {k: os.environ.get(k) for k in
                    sorted(set(SAFE_ENV) | {"NCCL_ALGO", "NCCL_PROTO", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
                                            "NCCL_IB_DISABLE", "NCCL_DEBUG"})},
        })

    # ---- correctness, once per op, at a small size with known values
    def check(op):
        cnt = 1024 * n
        x = torch.full((cnt,), float(rank + 1), dtype=torch.float32, device=dev)
        tot = n * (n + 1) / 2
        if op == "all_reduce":
            dist.all_reduce(x)
            ok = bool(torch.all(x == tot))
        elif op == "all_gather":
            y = torch.empty(cnt * n, dtype=torch.float32, device=dev)
            dist.all_gather_into_tensor(y, x)
            want = torch.arange(1, n + 1, dtype=torch.float32, device=dev).repeat_interleave(cnt)
            ok = bool(torch.equal(y, want))
        elif op == "reduce_scatter":
            y = torch.empty(cnt // n, dtype=torch.float32, device=dev)
            dist.reduce_scatter_tensor(y, x)
            ok = bool(torch.all(y == tot))
        elif op == "all_to_all":
            y = torch.empty_like(x)
            dist.all_to_all_single(y, x)
            want = torch.arange(1, n + 1, dtype=torch.float32, device=dev).repeat_interleave(cnt // n)
            ok = bool(torch.equal(y, want))
        else:
            if rank != 0:
                x.fill_(-1.0)
            dist.broadcast(x, 0)
            ok = bool(torch.all(x == 1.0))
        flag = torch.tensor([0 if ok else 1], device=dev)
        dist.all_reduce(flag)
        return int(flag.item()) == 0

    for op in args.ops:
        ok = check(op)
        if rank == 0:
            emit({"record": "check", "op": op, "nranks": n, "ok": ok})
            if not ok:
                print(f"{PROBE}: {op}: wrong result", file=sys.stderr)

    # ---- sweep
    sizes = []
    b = args.min_bytes
    while b <= args.max_bytes:
        sizes.append(b)
        b *= 2
    max_elems = max(args.max_bytes // esize, n)
    # one pair of buffers sized for the largest op; views are taken per size
    buf_in = torch.empty(max_elems + n, dtype=dtype, device=dev).uniform_(-1, 1)
    buf_out = torch.empty(max_elems + n, dtype=dtype, device=dev)
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)

    for op in args.ops:
        for nominal in sizes:
            count = max(nominal // esize, 1)  # elements of the reported buffer
            if op in ("all_gather", "reduce_scatter", "all_to_all"):
                per = max(count // n, 1)
                count = per * n
            nbytes = count * esize
            if op == "all_reduce":
                fn = lambda: dist.all_reduce(buf_in[:count])
            elif op == "broadcast":
                fn = lambda: dist.broadcast(buf_in[:count], 0)
            elif op == "all_gather":
                fn = lambda: dist.all_gather_into_tensor(buf_out[:count], buf_in[:count // n])
            elif op == "reduce_scatter":
                fn = lambda: dist.reduce_scatter_tensor(buf_out[:count // n], buf_in[:count])
            else:
                fn = lambda: dist.all_to_all_single(buf_out[:count], buf_in[:count])
            iters = args.iters if nbytes <= (256 << 20) else max(1, min(args.iters, 5))
            warm = args.warmup if nbytes <= (256 << 20) else min(args.warmup, 2)
            for _ in range(warm):
                fn()
            torch.cuda.synchronize(dev)
            graph = None
            if args.cuda_graph:
                graph = torch.cuda.CUDAGraph()
                # thread_local: ProcessGroupNCCL's watchdog thread may query events while this one captures
                with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                    for _ in range(iters):
                        fn()
                graph.replay()  # one untimed replay: the graph's first launch uploads it
                torch.cuda.synchronize(dev)
            dist.barrier(device_ids=[local_rank])
            e0.record()
            if graph is not None:
                graph.replay()
            else:
                for _ in range(iters):
                    fn()
            e1.record()
            e1.synchronize()
            if graph is not None:
                del graph
            t_us = e0.elapsed_time(e1) * 1e3 / iters
            tt = torch.tensor([t_us, t_us], dtype=torch.float64, device=dev)
            dist.all_reduce(tt[:1], op=dist.ReduceOp.SUM)
            dist.all_reduce(tt[1:], op=dist.ReduceOp.MAX)
            mean_us = float(tt[0].item()) / n
            max_us = float(tt[1].item())
            if rank == 0:
                algbw = nbytes / (mean_us * 1e3) if mean_us > 0 else None
                f = busbw_factor(op, n)
                emit({"record": "collective", "op": op, "algo": args.algo, "nranks": n, "dtype": args.dtype,
                      "bytes": nbytes, "count": count, "time_us": round(mean_us, 3),
                      "time_max_us": round(max_us, 3),
                      "algbw_GBps": round(algbw, 3) if algbw else None,
                      "busbw_GBps": round(algbw * f, 3) if algbw else None,
                      "busbw_factor": round(f, 6), "iters": iters, "in_place": op in IN_PLACE,
                      "timing": "cuda_graph" if args.cuda_graph else "eager"})
        if rank == 0:
            print(f"{PROBE}: {op} done", file=sys.stderr, flush=True)

    dist.barrier(device_ids=[local_rank])
    if rank == 0:
        emit({"record": "end", "probe": PROBE, "status": "ok", "elapsed_s": round(time.monotonic() - t_start, 3)})
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
