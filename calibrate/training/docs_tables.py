#!/usr/bin/python3
"""Rewrites the generated tables of docs/planner.md from the shipped fit (calibrate/training/compute-fit.json)
and a fresh leave-one-model-out validation (`racksim plan --validate`): the fitted parameters, the error per
system, model and precision, and the worst runs. Each table sits between `<!-- generated: NAME -->` and
`<!-- /generated -->`; the text around them is left alone. calibrate/training/fit.sh runs it after the fit.
With --readme it also re-runs the README's `racksim plan` example (about a second) and rewrites the lines of
that console block the docs test compares (tests/docs/test_console_blocks.py): the header, rank 1 up to its
MFU, and the comparison lines up to their DeviceMesh.

    calibrate/training/docs_tables.py [--readme | --check] [path/to/racksim]   (default: $RACKSIM_BIN, else build/cli/racksim)

--check writes nothing and exits 1 when a generated table of docs/planner.md differs from what it would write
(tests/docs/test_planner_tables.py; the held-out table went stale for several sessions before it was generated).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROWS = "calibrate/training/published_training_throughput.json"
DOC = os.path.join(ROOT, "docs", "planner.md")

PARAMS = [
    ("GEMM efficiency BF16 / FP8 / FP4", "dense GEMM rate / peak of that type", None),
    ("grouped GEMM factor", "grouped expert GEMMs reach this x the dense efficiency", "grouped_gemm_factor"),
    ("attention efficiency", "flash attention, of the BF16 peak", "attention_efficiency"),
    ("SSD scan efficiency", "Mamba-2 scan, of the BF16 peak", "ssm_efficiency"),
    ("HBM efficiency", "elementwise and quantisation kernels, of HBM bandwidth", "hbm_efficiency"),
    ("per GEMM launch", "fixed time per product", "gemm_overhead_us"),
    ("per layer block and pass", "launch gaps, host work (backward counts 2)", "block_overhead_us"),
    ("per MoE block and pass", "routing, permutation, dropless MoE's host sync", "moe_block_overhead_us"),
    ("per pipeline transfer", "beyond the link time", "pp_transfer_overhead_us"),
    ("TP traffic exposed", "fraction of the sequence-parallel collectives not hidden", "tp_exposed"),
    ("overlapped EP traffic exposed", "with --ep-overlap", "ep_exposed_overlapped"),
]


def fmt_param(g, key):
    if key is None:
        e = g["gemm_efficiency"]
        return " / ".join(f"{e[k]:.3f}" if k in e else "-" for k in ("bf16", "fp8", "fp4"))
    v = g[key]
    if key.endswith("_us"):
        return f"{v:.0f} us" if v >= 100 else f"{v:.1f} us"
    return f"{v:.3f}"


def params_table(fit):
    gens = fit["generations"]
    out = ["| parameter | what | Hopper | Blackwell |", "|---|---|---|---|"]
    for name, what, key in PARAMS:
        out.append(f"| {name} | {what} | {fmt_param(gens['hopper'], key)} | {fmt_param(gens['blackwell'], key)} |")
    return "\n".join(out)


def pct(x):
    return f"{100 * x:.1f} %"


def validation_tables(v):
    out = ["| group | runs | median abs error | worst abs error | mean error |", "|---|---|---|---|---|"]
    o = v["overall"]
    out.append(f"| all | {o['rows']} | {pct(o['median_abs_error'])} | {pct(o['worst_abs_error'])} | {100 * o['mean_error']:+.1f} % |")
    for g in v["groups"]:
        out.append(f"| {g['name']} | {g['rows']} | {pct(g['median_abs_error'])} | {pct(g['worst_abs_error'])} | {100 * g['mean_error']:+.1f} % |")
    table = "\n".join(out)
    worst = sorted(v["rows"], key=lambda r: -abs(r["error"]))
    over = [r for r in worst if abs(r["error"]) > 0.25]
    lines = [f"Runs off by more than 25 % ({len(over)} of {o['rows']}):", ""]
    for r in over:
        lines.append(f"* {r['run']}, {r['layout']} mb={r['micro_batch']}: {100 * r['error']:+.0f} %")
    return table, "\n".join(lines)


def replace_block(text, name, body):
    pat = re.compile(r"(<!-- generated: " + re.escape(name) + r" -->\n)(.*?)(\n?<!-- /generated -->)", re.S)
    if not pat.search(text):
        sys.exit(f"docs/planner.md has no '<!-- generated: {name} -->' block")
    return pat.sub(lambda m: m.group(1) + body + "\n<!-- /generated -->", text)


README_CMD = "racksim plan --system gb200-nvl72 --racks 4 --model deepseek-v3 --global-batch 4096 --seq-len 4096 --top 3"


def readme_layout(lines, held_count):
    """Where the README's plan example starts and where its held-out lines end (a, h), or exit naming what moved: the
    first line, "...", the held-out lines, "...", the table's header and first row, "...", the Megatron-LM arguments
    of #1 (cut), "...", then "Same model on" and three systems."""
    a = lines.index("$ " + README_CMD)
    h = a + 3 + held_count
    if (lines[a + 2] != "..." or lines[h] != "..." or not lines[h + 1].lstrip().startswith("#  GPUs")
            or not lines[h + 4].startswith("Megatron-LM arguments of #1") or lines[h + 5] != "..."
            or not lines[h + 6].startswith("Same model on")):
        sys.exit("README.md's plan example is not laid out as docs_tables.py expects (readme_layout)")
    return a, h


def refresh_readme(bin_):
    out = subprocess.run([bin_] + README_CMD.split()[1:], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    header = next(l for l in out if l.lstrip().startswith("#  GPUs"))
    first = next(l for l in out if l.startswith(" 1"))
    same = next(i for i, l in enumerate(out) if l.startswith("Same model on"))
    held = [l for l in out if l.startswith("held-out error")]
    path = os.path.join(ROOT, "README.md")
    lines = open(path).read().splitlines()
    a, h = readme_layout(lines, len(held))
    args = next(l for l in out if l.startswith("Megatron-LM arguments of #1"))
    cut = args.find(" --", 200)
    lines[a + 1] = out[0]
    lines[a + 3:h] = held
    lines[h + 1] = header[: header.index("MFU") + 3] + "    ..."
    lines[h + 2] = first[: first.index("%") + 1] + " ..."
    lines[h + 4] = args if cut < 0 else args[:cut] + " ..."
    lines[h + 6] = out[same]
    for j in range(3):
        lines[h + 7 + j] = out[same + 1 + j][: out[same + 1 + j].index(" (")] + " ..."
    open(path, "w").write("\n".join(lines) + "\n")


def heldout_table(h):
    """The held-out classes of calibrate/training/heldout_errors.json (what every plan quotes), in that file's order."""
    out = ["| generation, kind | held out | rows | median | 90th pct | worst | signed median |", "|---|---|---|---|---|---|---|"]
    for c in h["classes"]:
        other = {"blackwell": "B200 from H100", "hopper": "H100 from B200"}.get(c["generation"], "another system")
        held = "model" if c["held_out"] == "model" else f"system ({other})"
        kind = "dense" if c["kind"] == "dense" else "MoE"
        out.append(f"| {c['generation']} {kind} | {held} | {c['rows']} | {pct(c['median_abs'])} | {pct(c['p90_abs'])} | "
                   f"{pct(c['worst_abs'])} | {100 * c['median_signed']:+.1f} % |")
    return "\n".join(out)


def main():
    args = [a for a in sys.argv[1:] if a not in ("--readme", "--check")]
    bin_ = args[0] if args else os.environ.get("RACKSIM_BIN", os.path.join(ROOT, "build", "cli", "racksim"))
    check = "--check" in sys.argv[1:]
    if "--readme" in sys.argv[1:] and not check:
        refresh_readme(bin_)
    fit = json.load(open(os.path.join(ROOT, "calibrate", "training", "compute-fit.json")))
    r = subprocess.run([bin_, "plan", "--validate", ROWS, "--format", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    v = json.loads(r.stdout)
    table, worst = validation_tables(v)
    text = open(DOC).read()
    text = replace_block(text, "fit parameters", params_table(fit))
    text = replace_block(text, "validation", table)
    text = replace_block(text, "worst runs", worst)
    heldout = json.load(open(os.path.join(ROOT, "calibrate", "training", "heldout_errors.json")))
    text = replace_block(text, "held-out classes", heldout_table(heldout))
    if check:  # tests/docs/test_planner_tables.py: the shipped page against what this script writes now
        readme = open(os.path.join(ROOT, "README.md")).read().splitlines()
        start = readme.index("$ " + README_CMD)
        held = 0
        while readme[start + 3 + held].startswith("held-out error"):
            held += 1
        readme_layout(readme, held)
        if text != open(DOC).read():
            old_lines, new_lines = open(DOC).read().splitlines(), text.splitlines()
            first = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), min(len(old_lines), len(new_lines)))
            sys.exit(f"docs/planner.md's generated tables are stale from line {first + 1}: run "
                     f"calibrate/training/docs_tables.py (fit.sh does)\n  shipped: {old_lines[first] if first < len(old_lines) else ''}\n"
                     f"  now:     {new_lines[first] if first < len(new_lines) else ''}")
        print("docs/planner.md's generated tables are current")
        return
    open(DOC, "w").write(text)


if __name__ == "__main__":
    main()
