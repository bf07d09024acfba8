#!/usr/bin/python3
"""Bad CLI input: each case must exit with status 2, print exactly one line on stderr naming the problem,
and print nothing on stdout (racksim's rule: library throws InputError, the CLI prints one line, exits 2)."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["RACKSIM_BIN"]
SOURCE = os.environ["RACKSIM_SOURCE_DIR"]


def cases(tmp):
    with open(os.path.join(SOURCE, "topologies", "gb200-nvl72.json")) as f:
        doc = json.load(f)
    doc["tray"]["gpus"][0]["colour"] = "green"
    unknown_key = os.path.join(tmp, "unknown-key.json")
    with open(unknown_key, "w") as f:
        json.dump(doc, f)
    malformed = os.path.join(tmp, "malformed.json")
    with open(malformed, "w") as f:
        f.write('{"schema_version": 1, "id": "broken",\n')
    huge = os.path.join(tmp, "huge.json")
    with open(os.path.join(SOURCE, "topologies", "hgx-h100.json")) as f:
        text = f.read()
    with open(huge, "w") as f:
        f.write(text.replace('"bandwidth_GBps": 25,', '"bandwidth_GBps": 1e400,', 1))
    other_probes, a100_probes = os.path.join(tmp, "rtx-probes"), os.path.join(tmp, "a100-probes")
    for d, device in ((other_probes, "NVIDIA RTX 6000 Ada Generation"), (a100_probes, "NVIDIA A100-SXM4-80GB")):
        os.makedirs(d)
        with open(os.path.join(d, "gemm_bf16.jsonl"), "w") as f:
            f.write('{"record": "header", "probe": "gemm_bf16", "device": "%s"}\n'
                    '{"record": "gemm", "m": 4096, "n": 4096, "k": 4096, "time_us": 500.0}\n' % device)
    # (arguments, words the one stderr line must contain)
    return [
        (["show", "gb999"], ["'gb999' (unknown system)", "gb200-nvl72", "hgx-h100"]),
        (["show", "gb200-nvl72", "--racks", "0"], ["--racks", "invalid value 0", "a positive integer"]),
        (["show", "gb200-nvl72", "--racks", "1000000"], ["--racks", "invalid value 1000000", "MB to build", "at most"]),
        (["show", "gb200-nvl36x2", "--racks", "3"], ["--racks", "invalid value 3", "a multiple of 2"]),
        (["show", unknown_key], [unknown_key, "/tray/gpus/0/colour", "unknown key 'colour'"]),
        (["show", malformed], [malformed, "malformed JSON at byte"]),
        (["show", huge], [huge, "number out of range", "1e400"]),
        (["show", os.path.join(tmp, "missing.json")], ["missing.json", "no such file"]),
        (["route", "gb200-nvl72", "gpu0", "gpu9999"], ["dst", "'gpu9999'", "gpuN (0..71)"]),
        (["route", "gb200-nvl36x2", "gpu0", "gpu1", "--racks", "1"], ["--racks", "invalid value 1", "a multiple of 2"]),
        (["route", "gb200-nvl72", "gpu0", "r0.t0.gpu0"], ["dst", "'r0.t0.gpu0' (the source itself)", "a device other than the source"]),
        # A whole number past a 32-bit option (past 64 bits is caught on its text): CLI11 said only "Could not convert"
        (["plan", "--model", "llama-3-8b", "--global-batch", "99999999999", "--seq-len", "4096"],
         ["--global-batch", "'99999999999' is out of range", "[-2147483648, 2147483647]"]),
        (["collective", "--system", "hgx-h100", "--gpus", "8", "--op", "all_reduce", "--bytes", "1G", "--channels", "4294967296"],
         ["--channels", "'4294967296' is out of range"]),
        # numbers echoed as given, not with std::to_string's six decimals (1.000000 for 1.0000001, 309 digits for 1e300)
        (["sweep", "--system", "gb200-nvl72", "--op", "all_reduce", "--gpus", "72", "-b", "1K", "-e", "16G", "--step-factor", "1.0000001"],
         ["--step-factor", "invalid value 1.0000001;", "at most 1000 sizes"]),
        (["goodput", "--gpus", "72", "--step-s", "10", "--checkpoint-bytes", "1GB", "--days", "1e300"],
         ["--days", "invalid value 1e+300;", "(0, 3650] days"]),
        # CLI11's own range checks said "Value -1 not in range 0.000000 to 1797693...(309 digits).000000"
        (["offload", "--system", "gb200-nvl72", "--params", "70B", "--weight-bytes", "-1"],
         ["--weight-bytes", "'-1'; allowed: a finite number >= 0"]),
        (["offload", "--system", "gb200-nvl72", "--params", "70B", "--compute-time", "inf"],
         ["--compute-time", "'inf'; allowed: a finite number >= 0"]),
        (["offload", "--system", "gb200-nvl72", "--params", "70B", "--weight-reads", "-1"],
         ["--weight-reads", "'-1'; allowed: a whole number >= 0"]),
        (["place", "--system", "gb200-nvl72", "--gpu-numa-stride", "0"], ["--gpu-numa-stride", "'0'; allowed: a whole number > 0"]),
        (["serve", "--timeout", "0.5"], ["--timeout", "'0.5'; allowed: a number in [1, 3600]"]),
        # the limit in the option's unit (it said "up to 1e7 s" of an option in hours), the option by its name
        (["goodput", "--gpus", "72", "--step-s", "10", "--checkpoint-bytes", "1GB", "--repair-h", "1e9"],
         ["--repair-h", "invalid value 1000000000;", "[0, 2777] hours"]),
        (["goodput", "--gpus", "72", "--step-s", "10", "--checkpoint-bytes", "1GB", "--partition-mode", "adaptive-bandwidth",
          "--adaptive-slowdown", "2"], ["--adaptive-slowdown", "invalid value 2;", "[0, 1)"]),
        # options nothing reads in the mode given were ignored without a word
        (["goodput", "--gpus", "72", "--step-s", "10", "--checkpoint-bytes", "1GB", "--adaptive-slowdown", "0.2"],
         ["--adaptive-slowdown", "with --partition-mode full-bandwidth", "only with --partition-mode adaptive-bandwidth"]),
        (["goodput", "--gpus", "72", "--step-s", "10", "--checkpoint-bytes", "1GB", "--seq-len", "4096"],
         ["--seq-len", "--model"]),
        (["sweep", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "-b", "1K", "-e", "4K", "--dask-timeout", "5"],
         ["--dask-timeout", "--dask"]),
        # an option that does not apply to the run asked for was ignored: refused, naming what it needs
        (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--inner", "ring"],
         ["--inner", "'ring'", "only with --algo hierarchical", "--algo is auto"]),
        (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--root", "3"],
         ["--root", "invalid value 3", "only with --op broadcast, reduce or send_recv"]),
        (["collective", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "1G", "--algo", "nvls", "--nvls", "off"],
         ["--algo", "'nvls' with --nvls off"]),
        (["fig4", "--system", "gb200-nvl72", "--gpus", "72", "--bytes", "1G", "--step-factor", "4"], ["--bytes excludes --step-factor"]),
        (["collective", "--system", "gb200-nvl72", "--racks", "2", "--op", "all_reduce", "--gpus", "144", "--bytes", "1G",
          "--algo", "hierarchical", "--inner", "nvls", "--nvls", "off"], ["--inner-algorithm", "'nvls' with --nvls off"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--ep", "4"],
         ["--ep", "invalid value 4", "llama-3-8b has no routed experts"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--compare", "hgx-b200,foo"],
         ["--compare", "invalid value 'foo'", "unknown system"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--ep-overlap"],
         ["--ep-overlap", "invalid value for llama-3-8b", "a model with routed experts"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--no-mtp"],
         ["--no-mtp", "invalid value for llama-3-8b", "a model with multi-token-prediction modules"]),
        # nccl-tests runs whole elements per rank: 100 B of all_gather on 72 ranks is none (it ran 100 B)
        (["collective", "--system", "gb200-nvl72", "--op", "all_gather", "--gpus", "72", "--bytes", "100"],
         ["--bytes", "100 B of float for all_gather on 72 ranks", "288 B"]),
        # racksim prices its own algorithms and point-to-point with Simple: another protocol was reported as run
        (["collective", "--system", "hgx-h100", "--op", "all_to_all", "--gpus", "8", "--bytes", "1K", "--protocol", "LL"],
         ["--protocol", "'LL' for all_to_all", "auto or Simple"]),
        (["collective", "--system", "hgx-h100", "--op", "send_recv", "--gpus", "8", "--bytes", "1G", "--channels", "4"],
         ["--channels", "4 for send_recv", "no channel term"]),
        # the training fit's probe directories: only where a fit runs, and only Hopper GPUs' probes
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--fit-probes", tmp],
         ["--fit-probes", "without --fit or --validate", "with --fit FILE or --validate FILE"]),
        (["plan", "--validate", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--in-sample", "--fit-probes", tmp], ["--fit-probes", "with --in-sample", "not --in-sample or --every-layout"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--fit-probes", other_probes], [other_probes, "gemm_bf16.jsonl:1", "/device", "NVIDIA RTX 6000", "a GPU racksim describes"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--fit-probes", a100_probes, "--fit-probes", a100_probes + "/"], [a100_probes + "/", "(named twice)", "each probe directory once"]),
        # an A100's kernels would fit Hopper's parameters, which Ampere borrows: refused, naming the point
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--fit-probes", a100_probes], ["A100 bf16 GEMM 4096x4096x4096 (a100-probes)", "generation 'ampere' (hgx-a100)",
                                         "its own for (hopper, blackwell)"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--fit-probes", os.path.join(tmp, "no-such-dir")], ["no-such-dir/gemm_bf16.jsonl", "(missing)", "a GEMM probe file"]),
        # Megatron FSDP runs on Megatron's default rank order only
        (["plan", "--system", "hgx-h100", "--gpus", "16", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096",
          "--zero", "3", "--mesh-order", "dp-outer"], ["--mesh-order", "dp-outer with ZeRO-3", "use-tp-pp-dp-mapping"]),
        # Megatron offloads the optimizer of its distributed optimizer only
        (["plan", "--system", "hgx-h100", "--gpus", "8", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096",
          "--zero", "0", "--offload", "optimizer"], ["--offload", "optimizer with --zero 0", "ZeRO 1-3"]),
        # an option of one plan mode given in another was ignored without a word
        (["plan", "--validate", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"), "--tp", "4"],
         ["--tp", "with --validate", "no job options with --validate"]),
        (["plan", "--validate", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--system", "hgx-h100"], ["--system", "with --validate", "the file gives"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--precision", "fp8-cs"], ["--precision", "with --fit", "no job options with --fit"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--validate", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json")],
         ["--fit", "with --validate", "one of --fit FILE"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--in-sample"], ["--in-sample", "with --fit", "with --validate FILE"]),
        (["plan", "--fit", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--format", "json"], ["--format", "with --fit", "writes its parameters as JSON"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--in-sample"],
         ["--in-sample", "without --validate or --fit", "with --validate FILE"]),
        (["plan", "--model", "llama-3-8b", "--global-batch", "64", "--seq-len", "4096", "--fit-out", "x.json"],
         ["--fit-out", "without --validate or --fit", "with --fit FILE"]),
        (["plan", "--validate", os.path.join(SOURCE, "calibrate", "training", "published_training_throughput.json"),
          "--fit-report", "r.md"], ["--fit-report", "with --validate", "with --fit FILE"]),
        # an absurd model size was priced (1e30 parameters: 2e21 GB of weights)
        (["offload", "--system", "gb200-nvl72", "--params", "1e30"], ["--params", "invalid value '1e30'", "at most 1000000000000000"]),
    ]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = cases(tmp)
        for args, words in all_cases:
            run = subprocess.run([BIN, *args], capture_output=True, text=True)
            problems = []
            if run.returncode != 2:
                problems.append(f"exit status {run.returncode}, expected 2")
            if run.stdout:
                problems.append(f"stdout not empty: {run.stdout[:200]!r}")
            lines = run.stderr.splitlines()
            if len(lines) != 1 or not run.stderr.endswith("\n"):
                problems.append(f"stderr is {len(lines)} line(s), expected exactly one: {run.stderr!r}")
            for w in words:
                if w not in run.stderr:
                    problems.append(f"stderr lacks {w!r}: {run.stderr.strip()!r}")
            status = "FAIL" if problems else "ok  "
            print(status, "racksim", " ".join(args))
            for p in problems:
                print("     ", p)
            failures += bool(problems)
    print(f"{len(all_cases)} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
