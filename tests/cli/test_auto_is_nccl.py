"""`--algo auto` is what NCCL 2.28 would run (models/nccl): per system, the algorithm, protocol and channel
count `racksim collective` reports equal the table worked out by hand from NCCL's source
(tests/unit/nccl/test_nccl_decision.cpp explains each row with file:line). auto never reports racksim's
own `hierarchical`; the calibration does not change NCCL's choice; --algo/--protocol/--channels override
it like NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS."""
import json
import os
import subprocess
import sys

RACKSIM = os.environ["RACKSIM_BIN"]

# (system, racks, gpus, bytes) -> (algo, protocol, channels)
TABLE = [
    (("hgx-h100", 1, 8, "1K"), ("ring", "LL", 1)),
    (("hgx-h100", 1, 8, "1M"), ("ring", "LL", 24)),
    (("hgx-h100", 1, 8, "1G"), ("nvls", "Simple", 16)),
    (("hgx-h200", 1, 8, "1G"), ("nvls", "Simple", 16)),
    (("hgx-b200", 1, 8, "1G"), ("nvls", "Simple", 24)),
    (("gb200-nvl72", 1, 4, "1G"), ("ring", "Simple", 32)),
    (("gb200-nvl72", 1, 72, "1G"), ("nvls", "Simple", 24)),
    (("gb300-nvl72", 1, 72, "1G"), ("nvls", "Simple", 24)),
    (("gb200-nvl72", 2, 144, "1G"), ("nvls_tree", "Simple", 32)),
    (("hgx-h100", 8, 64, "1K"), ("tree", "LL", 1)),
]


def run(system, racks, gpus, size, *extra):
    cmd = [RACKSIM, "collective", "--system", system, "--racks", str(racks), "--op", "all_reduce", "--gpus", str(gpus),
           "--bytes", size, "--format", "json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    failures, checks = [], 0
    for (system, racks, gpus, size), want in TABLE:
        got = run(system, racks, gpus, size)
        checks += 1
        if (got["algo"], got["protocol"], got["channels"]) != want:
            failures.append(f"{system} x{racks} {gpus} GPUs {size}: got {got['algo']}/{got['protocol']}/{got['channels']}, want {want}")
        checks += 1
        if got["algo"] == "hierarchical":
            failures.append(f"{system} {gpus} GPUs: auto reported hierarchical")
    # The calibration prices what runs; it does not change NCCL's choice.
    for cal in ("none", "default"):
        got = run("gb200-nvl72", 1, 72, "1G", "--calibration", cal)
        checks += 1
        if got["algo"] != "nvls":
            failures.append(f"calibration {cal}: auto picked {got['algo']}")
    # Overrides.
    got = run("hgx-h100", 1, 8, "1G", "--algo", "ring", "--protocol", "LL128", "--channels", "4")
    checks += 1
    if (got["algo"], got["protocol"], got["channels"]) != ("ring", "LL128", 4):
        failures.append(f"overrides not honoured: {got['algo']}/{got['protocol']}/{got['channels']}")
    for f in failures:
        print("FAIL:", f)
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
