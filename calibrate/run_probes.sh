#!/usr/bin/env bash
# run_probes.sh: build every calibration probe with nvcc (no CMake needed) and run them all on this machine.
#
# Writes <out>/<probe>.jsonl for each probe, plus
#   nvidia-smi.txt  (nvidia-smi, nvidia-smi -q, nvidia-smi topo -m, nvidia-smi nvlink -s; all read-only)
#   commands.txt    (the exact commands, nvcc/driver/NCCL/torch versions, the environment that matters)
#   run.log         (each probe's stderr and exit status)
# <out> defaults to calibrate/data/<machine>-<date>, <machine> to a slug of the GPU name, host link and GPU
# count (e.g. h200-pcie-1gpu, gb200-c2c-4gpu), <date> to today's UTC date.
#
# usage: calibrate/run_probes.sh [--out DIR] [--machine NAME] [--date YYYY-MM-DD] [--build-dir DIR]
#                                [--arch 'NVCC ARCH FLAGS'] [--nccl-max-bytes 8G] [--no-nccl] [--no-compute] [--compute-only] [--quick]
#   --quick       tiny sweeps (a smoke test of the whole pipeline in a few seconds)
#   --no-compute  leave out compute_torch.py (GEMM/FP8/grouped/attention/elementwise/launch through PyTorch;
#                 it runs only where torch imports, ~3 minutes on an H200)
#   --compute-only  nvidia-smi.txt, commands.txt and compute_torch.jsonl alone (no nvcc build, no NCCL)
# Environment: PYTHON (default python3), PROBE_TIMEOUT seconds per probe (default 300), NVCC (default nvcc).
# NVLink multicast stays off: NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1.
set -uo pipefail

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
probes_dir="$here/probes"
out="" machine="" date_s="" build_dir="" arch="" nccl_max="8G" no_nccl=0 no_compute=0 compute_only=0 quick=0

die_usage() { echo "run_probes.sh: $1 (usage: run_probes.sh [--out DIR] [--machine NAME] [--date YYYY-MM-DD] [--build-dir DIR] [--arch FLAGS] [--nccl-max-bytes N] [--no-nccl] [--no-compute] [--compute-only] [--quick])" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || die_usage "--out needs a directory"; out="$2"; shift 2 ;;
    --machine) [ $# -ge 2 ] || die_usage "--machine needs a name"; machine="$2"; shift 2 ;;
    --date) [ $# -ge 2 ] || die_usage "--date needs YYYY-MM-DD"; date_s="$2"; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || die_usage "--build-dir needs a directory"; build_dir="$2"; shift 2 ;;
    --arch) [ $# -ge 2 ] || die_usage "--arch needs nvcc flags"; arch="$2"; shift 2 ;;
    --nccl-max-bytes) [ $# -ge 2 ] || die_usage "--nccl-max-bytes needs a size"; nccl_max="$2"; shift 2 ;;
    --no-nccl) no_nccl=1; shift ;;
    --no-compute) no_compute=1; shift ;;
    --compute-only) compute_only=1; shift ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die_usage "unknown option '$1'" ;;
  esac
done
case "$machine" in *[!A-Za-z0-9._-]*) die_usage "--machine may hold letters, digits, '.', '_' and '-' only" ;; esac

PYTHON="${PYTHON:-python3}"
NVCC="${NVCC:-nvcc}"
PROBE_TIMEOUT="${PROBE_TIMEOUT:-300}"

# ---- what machine is this
ngpu=0
gpu_name=""
if command -v nvidia-smi >/dev/null 2>&1; then
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
fi
if [ -z "$machine" ]; then
  if [ "$ngpu" -gt 0 ]; then
    slug=$(printf '%s' "$gpu_name" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
    case "$slug" in gh200*|gb200*|gb300*|gb10*) link=c2c ;; *) link=pcie ;; esac
    machine="${slug}-${link}-${ngpu}gpu"
  else
    machine="nogpu-$(uname -m)"
  fi
fi
[ -n "$date_s" ] || date_s=$(date -u +%F)
[ -n "$out" ] || out="$here/data/${machine}-${date_s}"
[ -n "$build_dir" ] || build_dir="${TMPDIR:-/tmp}/racksim-probes-build"
if [ -z "$arch" ]; then
  if [ "$ngpu" -gt 0 ]; then arch="-arch=native"; else arch="-gencode arch=compute_90,code=sm_90"; fi
fi
mkdir -p "$out" "$build_dir" || { echo "run_probes.sh: cannot create $out or $build_dir" >&2; exit 1; }
out="$(cd "$out" && pwd)"
cmds="$out/commands.txt"
log="$out/run.log"
: >"$log"

{
  echo "# racksim calibrate/run_probes.sh, $(date -u +%FT%TZ)"
  echo "# machine: $machine   gpus: $ngpu   gpu: ${gpu_name:-none}"
  echo "# host: $(hostname)   $(uname -srm)"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')   cores: $(nproc)"
  echo "# driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)"
  echo "# /proc/driver/nvidia/version: $(head -n1 /proc/driver/nvidia/version 2>/dev/null)"
  echo "# nvcc: $($NVCC --version 2>/dev/null | tail -n2 | tr '\n' ' ')"
  if [ -r /usr/include/nccl.h ]; then
    echo "# system nccl.h: $(grep -E '#define NCCL_(MAJOR|MINOR|PATCH) ' /usr/include/nccl.h | awk '{print $3}' | paste -sd. -)"
  fi
  echo "# python: $($PYTHON --version 2>&1)   torch: $($PYTHON -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null || echo none)"
  echo "# torch NCCL: $($PYTHON -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))' 2>/dev/null || echo none)"
  echo "# torch cuDNN: $($PYTHON -c 'import torch; print(torch.backends.cudnn.version())' 2>/dev/null || echo none)"
  echo "# env: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
  echo "# git: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
} >"$cmds"

logcmd() { printf '%s\n' "$*" >>"$cmds"; }

# ---- nvidia-smi facts (read-only queries only)
{
  for q in "" "-q" "topo -m" "nvlink -s"; do
    echo "===== nvidia-smi $q"
    # shellcheck disable=SC2086
    nvidia-smi $q 2>&1 || echo "(nvidia-smi $q failed with status $?)"
    echo
  done
} >"$out/nvidia-smi.txt" 2>&1
logcmd "nvidia-smi; nvidia-smi -q; nvidia-smi topo -m; nvidia-smi nvlink -s   > nvidia-smi.txt"

# ---- build
probes=(device_attributes copy_bandwidth sm_bandwidth p2p_bandwidth gemm_bf16)
if [ $compute_only -eq 1 ]; then
  [ $no_compute -eq 0 ] || die_usage "--compute-only and --no-compute leave nothing to run"
  probes=()
  no_nccl=1
fi
status=0
[ ${#probes[@]} -gt 0 ] && echo "run_probes.sh: building ${#probes[@]} probes into $build_dir ($arch)" >&2
nvcc_path=$(command -v "$NVCC" || true)
cuda_lib="$(cd "$(dirname "${nvcc_path:-/usr/local/cuda/bin/nvcc}")/.." 2>/dev/null && pwd)/lib64"
pids=()
for p in "${probes[@]}"; do
  extra=""
  # cuBLAS is a shared library: record its directory as the run path so no LD_LIBRARY_PATH is needed
  [ "$p" = gemm_bf16 ] && extra="-lcublas -Xlinker -rpath -Xlinker $cuda_lib"
  # shellcheck disable=SC2086
  cmd="$NVCC -O3 -std=c++17 $arch -I$probes_dir -o $build_dir/$p $probes_dir/$p.cu $extra"
  logcmd "$cmd"
  ( $cmd >"$build_dir/$p.build.log" 2>&1; echo $? >"$build_dir/$p.build.rc" ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
for p in "${probes[@]}"; do
  rc=$(cat "$build_dir/$p.build.rc" 2>/dev/null || echo 1)
  if [ "$rc" != 0 ]; then
    echo "run_probes.sh: build of $p failed:" >&2
    cat "$build_dir/$p.build.log" >&2
    { echo "===== build $p failed (status $rc)"; cat "$build_dir/$p.build.log"; } >>"$log"
    status=1
  fi
done

# ---- run
run_probe() {  # run_probe NAME OUTFILE CMD...
  local name="$1" file="$2"; shift 2
  logcmd "$* > $(basename "$file")"
  echo "run_probes.sh: running $name" >&2
  local t0=$SECONDS
  timeout "$PROBE_TIMEOUT" "$@" >"$file" 2>"$out/.stderr.tmp"
  local rc=$?
  { echo "===== $name: exit $rc after $((SECONDS - t0)) s: $*"; cat "$out/.stderr.tmp"; } >>"$log"
  rm -f "$out/.stderr.tmp"
  if [ $rc -ne 0 ]; then
    echo "run_probes.sh: $name exited with status $rc (see run.log)" >&2
    status=1
  fi
}

if [ $quick -eq 1 ]; then
  a_copy=(--max-bytes 1M --iters 3 --warmup 1)
  a_sm=(--min-bytes 64M --max-bytes 128M --host-max-bytes 16M --pageable-max-bytes 16M --iters 3 --warmup 1)
  a_p2p=(--max-bytes 1M --iters 3 --warmup 1)
  a_gemm=(--min-size 1024 --max-size 2048 --iters 3 --warmup 1)
  nccl_max="1M"
else
  a_copy=() a_sm=() a_p2p=() a_gemm=()
fi

for p in "${probes[@]}"; do
  [ -x "$build_dir/$p" ] || continue
  case "$p" in
    copy_bandwidth) args=("${a_copy[@]}") ;;
    sm_bandwidth) args=("${a_sm[@]}") ;;
    p2p_bandwidth) args=("${a_p2p[@]}") ;;
    gemm_bf16) args=("${a_gemm[@]}") ;;
    *) args=() ;;
  esac
  run_probe "$p" "$out/$p.jsonl" "$build_dir/$p" "${args[@]}"
done

if [ $no_nccl -eq 0 ]; then
  if [ "$ngpu" -ge 1 ] && $PYTHON -c 'import torch' >/dev/null 2>&1; then
    # One GPU: NCCL's one-rank path (no exchange; an out-of-place call is one device copy), NCCL_ALGO moot.
    algos=(ring tree)
    [ "$ngpu" -eq 1 ] && algos=(default)
    for algo in "${algos[@]}"; do
      if command -v torchrun >/dev/null 2>&1; then launcher=(torchrun); else launcher=("$PYTHON" -m torch.distributed.run); fi
      # NCCL implements tree for all_reduce only: with NCCL_ALGO=tree other collectives either fail ("no
      # algorithm/protocol available") or silently fall back to ring (NVIDIA/nccl issues 317, 1304), and
      # all_to_all is point-to-point (NCCL_ALGO has no effect), so the tree run sweeps all_reduce alone.
      ops=()
      [ "$algo" = tree ] && ops=(--ops all_reduce)
      # --cuda-graph: GPU time of back-to-back ops, as nccl-tests measures; eager torch.distributed calls time
      # the host's launch rate below a few MiB (40-50 us a call on the lent H200 VMs, issue 7)
      run_probe "nccl_sweep ($algo)" "$out/nccl_sweep_${algo}.jsonl" \
        "${launcher[@]}" --standalone --nproc-per-node "$ngpu" "$probes_dir/nccl_sweep.py" --algo "$algo" --max-bytes "$nccl_max" --cuda-graph "${ops[@]}"
    done
  else
    # one process: writes a skipped record (no torch, or no GPU)
    run_probe "nccl_sweep" "$out/nccl_sweep.jsonl" "$PYTHON" "$probes_dir/nccl_sweep.py" --max-bytes "$nccl_max"
  fi
fi

# compute efficiencies through PyTorch (one GPU): only where torch imports
if [ $no_compute -eq 0 ]; then
  if [ "$ngpu" -ge 1 ] && $PYTHON -c 'import torch' >/dev/null 2>&1; then
    a_compute=()
    [ $quick -eq 1 ] && a_compute=(--quick)
    run_probe "compute_torch" "$out/compute_torch.jsonl" "$PYTHON" "$probes_dir/compute_torch.py" "${a_compute[@]}"
  else
    echo "run_probes.sh: compute_torch.py not run (needs a GPU and torch: gpus $ngpu, torch $($PYTHON -c 'import torch' >/dev/null 2>&1 && echo yes || echo no))" >&2
    echo "===== compute_torch: not run (gpus $ngpu; needs a GPU and an importable torch)" >>"$log"
  fi
fi

# ---- headline numbers (largest size of each series), for the terminal
if command -v "$PYTHON" >/dev/null 2>&1; then
  "$PYTHON" - "$out" <<'PYEOF' || true
import glob, json, os, sys
out = sys.argv[1]
best = {}
torch_lines = []
for f in sorted(glob.glob(os.path.join(out, "*.jsonl"))):
    for line in open(f):
        if os.path.basename(f) == "compute_torch.jsonl":
            torch_lines.append(line)
            continue
        try:
            r = json.loads(line)
        except ValueError:
            print(f"  {os.path.basename(f)}: not JSON: {line[:80]!r}"); continue
        k = r.get("record")
        if k == "copy":
            key = f"copy {r['direction']} {r['host_memory']}"
        elif k == "sm_bandwidth":
            key = f"sm {r['memory']} {r['op']}"
        elif k == "gemm":
            key = f"gemm bf16 {r['m']}"
        elif k == "p2p":
            key = f"p2p {r['src']}->{r['dst']} {r['mode']}"
        elif k == "collective":
            key = f"nccl {r['op']} {r['algo']}"
        elif k in ("skipped", "error"):
            print(f"  {os.path.basename(f)}: {k}: {r.get('reason') or r.get('message')}"); continue
        elif k == "attributes":
            print(f"  device {r['device_index']}: {r['name']}: {r['classification']}, {r['sm_count']} SMs, "
                  f"{r['total_memory_bytes']/2**30:.1f} GiB"); continue
        else:
            continue
        if key not in best or r.get("bytes", 0) >= best[key].get("bytes", 0):
            best[key] = r
for key, r in best.items():
    if r["record"] == "gemm":
        print(f"  {key:32s} {r['TFLOPS']:10.1f} TFLOP/s  (check {r['check']})")
    elif r["record"] == "collective":
        print(f"  {key:32s} {r['busbw_GBps']:10.1f} GB/s busbw at {r['bytes']} B")
    else:
        print(f"  {key:32s} {r['GBps']:10.1f} GB/s at {r['bytes']} B")
# compute_torch: a few headline figures
recs = []
for line in torch_lines:
    try:
        recs.append(json.loads(line))
    except ValueError:
        print(f"  compute_torch.jsonl: not JSON: {line[:80]!r}")
for r in recs:
    k = r.get("record")
    if k == "skipped" and r.get("scope") == "probe":
        print(f"  compute_torch.jsonl: skipped: {r.get('reason')}")
    elif k == "gemm" and r["m"] == r["n"] == r["k"] and r.get("fast_accum") is not True:
        print(f"  torch gemm {r['dtype']:9s} {r['m']}^3       {r['TFLOPS']:10.1f} TFLOP/s  fraction {r['fraction_of_peak']}")
    elif k == "attention" and r["seq"] >= 4096 and r["batch"] == 1 and r["heads"] == r["kv_heads"] == 32:
        print(f"  torch attention {r['backend']:5s} {r['mode']:7s} s{r['seq']} d{r['head_dim']} {r['TFLOPS']:8.1f} TFLOP/s  fraction {r['fraction_of_peak']}")
    elif k == "elementwise" and r["op"] in ("add", "cast_fp8") and r["elements"] >= 2**27:
        print(f"  torch elementwise {r['op']:9s}      {r['GBps']:10.1f} GB/s  fraction {r['fraction_of_peak']}")
    elif k == "launch":
        print(f"  torch launch {r['op']:14s} {r['mode']:10s} {r['time_per_op_us']:8.2f} us/op")
    elif k == "skipped" or k == "error":
        print(f"  compute_torch.jsonl: {k}: {json.dumps(r)[:160]}")
g = [r["ratio_to_dense"] for r in recs if r.get("record") == "grouped_gemm" and r["impl"] == "torch._grouped_mm"]
if g:
    g.sort()
    print(f"  torch grouped_mm / dense        median ratio {g[len(g)//2]:.3f} (min {g[0]:.3f}, max {g[-1]:.3f}, {len(g)} points)")
PYEOF
fi
echo "run_probes.sh: results in $out (status $status)" >&2
exit $status
