#!/usr/bin/python3
"""Sweeps, goodput Monte Carlo and plans on Dask (issue 14 part 5, docs/dask.md): a LocalCluster of 2 worker
processes gives byte-identical answers to the local run, from Python (client=) and from the CLI (--dask
ADDRESS); a scheduler that does not answer, a bad address and a missing dask.distributed each give one
clear line and exit 2, quickly; nothing is added to stderr when it is not a terminal."""
import json
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
BUILD = os.environ["RACKSIM_BUILD_DIR"]
PATHS = [os.path.join(BUILD, "bindings"), os.path.join(SOURCE, "bindings", "python")]
sys.path[:0] = PATHS
# The workers are new processes: they find racksim the same way.
os.environ["PYTHONPATH"] = os.pathsep.join(PATHS + [p for p in [os.environ.get("PYTHONPATH")] if p])
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def racksim(*args, env=None, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=env)


def main():
    import racksim as rs
    from distributed import Client, LocalCluster

    start = time.time()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_port=0)
    client = Client(cluster)
    address = cluster.scheduler_address
    print(f"LocalCluster of 2 workers at {address} in {time.time() - start:.1f} s", flush=True)
    try:
        # ---- Python: client= ----
        gb = rs.load("gb200-nvl72")
        sweep = dict(op="all_reduce", gpus=72, min_bytes="1K", max_bytes="16G", step_factor=2, progress=False)
        local = gb.sweep(**sweep).to_json()
        remote = gb.sweep(**sweep, client=client).to_json()
        check(local == remote and len(json.loads(local)["bytes"]) == 25,
              "sweep: 25 sizes 1 KiB-16 GiB on 72 GPUs, client= byte-identical to local")
        two = rs.load("gb200-nvl72", racks=2, partitions="2x9")
        args = dict(op="all_gather", gpus=32, min_bytes="1M", max_bytes="1G", step_factor=32, fail="tray:17", calibration="none")
        check(two.sweep(**args).to_json() == two.sweep(**args, client=client).to_json(),
              "sweep with partitions, a failure and calibration none: client= byte-identical")
        # NCCL's rail rings across racks: the workers run their quotient as the local sweep does.
        flat = rs.load("gb200-nvl72", racks=2)
        args = dict(op="all_reduce", gpus=144, min_bytes="1M", max_bytes="1G", step_factor=32, algo="ring")
        flat_local = flat.sweep(**args).to_json()
        check(flat_local == flat.sweep(**args, client=client).to_json() and "listed by its symmetry" in flat_local,
              "sweep of flat rings over 2 racks (their quotient): client= byte-identical")
        gp = dict(gpus=4608, step_s=10, checkpoint_bytes="5700GB", spare_trays=1, trials=300, compare=True)
        local_g = json.dumps(rs.goodput(**gp))
        check(local_g == json.dumps(rs.goodput(**gp, client=client)), "goodput --compare, 3 x 300 trials: client= byte-identical")
        plan = dict(system="gb200-nvl72", racks=1, model="llama-3-8b", global_batch=256, seq_len=4096, gpus=16,
                    engine_top=1, compare="none")
        check(json.dumps(rs.plan(**plan).attrs["plan"]) == json.dumps(rs.plan(**plan, client=client).attrs["plan"]),
              "plan (one unit on a worker): client= byte-identical")
        try:
            gb.sweep("all_reduce", 72, "1K", "4K", algo="bogus", client=client)
            check(False, "a bad algorithm with client= raises")
        except rs.InputError as e:
            check("--algo" in str(e) or "algo" in str(e), f"a bad algorithm with client= raises InputError before any unit: {e}")
        try:
            gb.sweep("all_reduce", 72, "1K", "4K", client="tcp://nowhere:1")
            check(False, "client= that is not a Client raises")
        except TypeError as e:
            check("dask.distributed.Client" in str(e), f"client= that is not a Client: TypeError ({e})")
        check(rs.work.progress_bar(3, None) is None and rs.work.progress_bar(3, False) is None,
              "no progress bar when stderr is not a terminal, or with progress=False")

        # ---- CLI: --dask ADDRESS ----
        cli = ["sweep", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "72", "-b", "1K", "-e", "16G"]
        for fmt in ("json", "table", "csv"):
            a, b = racksim(*cli, "--format", fmt), racksim(*cli, "--format", fmt, "--dask", address)
            check(a.returncode == 0 and b.returncode == 0 and a.stdout == b.stdout and b.stderr == "",
                  f"racksim sweep --format {fmt} --dask: byte-identical stdout, nothing on stderr "
                  f"(exit {b.returncode} {b.stderr.strip()[:200]})")
        gcli = ["goodput", "--gpus", "4608", "--step-s", "10", "--checkpoint-bytes", "5700GB", "--spare-trays", "1",
                "--trials", "300", "--compare", "--format", "json"]
        a, b = racksim(*gcli), racksim(*gcli, "--dask", address)
        check(a.returncode == 0 and a.stdout == b.stdout and json.loads(b.stdout) == json.loads(local_g),
              f"racksim goodput --compare --dask: byte-identical to the local run and to Python's "
              f"(exit {b.returncode} {b.stderr.strip()[:200]})")
        bad = racksim(*cli, "--algo", "bogus", "--dask", address)
        check(bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--algo" in bad.stderr,
              f"a bad algorithm with --dask: exit 2, one line ({bad.stderr.strip()[:160]})")
        down = racksim(*cli, "--fail", "tray:0", "--dask", address)
        check(down.returncode == 1 and down.stderr == racksim(*cli, "--fail", "tray:0").stderr,
              f"a run that cannot happen: exit 1 and the local message ({down.stderr.strip()[:160]})")
    finally:
        client.close()
        cluster.close()

    # ---- CLI errors without a cluster ----
    t = time.time()
    r = racksim(*cli, "--dask", "tcp://127.0.0.1:9", "--dask-timeout", "1", timeout=60)
    took = time.time() - t
    check(r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "no Dask scheduler answered" in r.stderr
          and took < 20, f"no scheduler at the address: exit 2, one line, in {took:.1f} s ({r.stderr.strip()[:200]})")
    r = racksim(*cli, "--dask", "not-an-address", "--dask-timeout", "1", timeout=60)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "not-an-address" in r.stderr,
          f"an address that is not one: exit 2, one line ({r.stderr.strip()[:200]})")
    r = racksim(*cli, "--dask-timeout", "0", "--dask", "tcp://127.0.0.1:9")
    check(r.returncode == 2 and "--dask-timeout" in r.stderr, f"--dask-timeout 0: exit 2 ({r.stderr.strip()[:160]})")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "distributed.py"), "w") as f:
            f.write("raise ImportError('no module named distributed (hidden by the test)')\n")
        env = dict(os.environ, PYTHONPATH=tmp)
        r = racksim(*cli, "--dask", "tcp://127.0.0.1:9", env=env, timeout=60)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "python3-distributed" in r.stderr,
              f"dask.distributed missing: exit 2, one line naming the Debian package ({r.stderr.strip()[:200]})")
    print(f"{len(failures)} failed" if failures else "all passed", f"in {time.time() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
