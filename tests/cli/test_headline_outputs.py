#!/usr/bin/python3
"""Issue 16: `make run`'s out/headline.json and out/fig4_allreduce.png are written whole or not at all
(scripts/headline.py write_outputs): a failure while drawing leaves neither file (nor a temporary one),
and the outputs of an earlier run stay as they were."""
import json
import os
import sys
import tempfile

SOURCE = os.environ["RACKSIM_SOURCE_DIR"]
BUILD = os.environ["RACKSIM_BUILD_DIR"]
sys.path[:0] = [os.path.join(SOURCE, "scripts"), os.path.join(BUILD, "bindings"), os.path.join(SOURCE, "bindings", "python")]
import headline  # noqa: E402


def draw_ok(path):
    with open(path, "wb") as f:
        f.write(b"\x89PNG fake")


def draw_fails(path):
    with open(path, "wb") as f:
        f.write(b"\x89PNG half")
    raise RuntimeError("matplotlib failed")


def main():
    problems = []
    with tempfile.TemporaryDirectory() as out:
        try:
            headline.write_outputs(out, {"results": [1]}, draw_fails)
            problems.append("a failing draw did not raise")
        except RuntimeError:
            pass
        if os.listdir(out):
            problems.append(f"a failed run left {os.listdir(out)}")
        json_path, png = headline.write_outputs(out, {"results": [1]}, draw_ok)
        if sorted(os.listdir(out)) != ["fig4_allreduce.png", "headline.json"] or json.load(open(json_path)) != {"results": [1]}:
            problems.append(f"a good run wrote {os.listdir(out)}")
        try:
            headline.write_outputs(out, {"results": [2]}, draw_fails)
        except RuntimeError:
            pass
        if json.load(open(json_path)) != {"results": [1]} or open(png, "rb").read() != b"\x89PNG fake":
            problems.append("a failed run changed the earlier outputs")
        if sorted(os.listdir(out)) != ["fig4_allreduce.png", "headline.json"]:
            problems.append(f"temporary files left: {os.listdir(out)}")
    for p in problems:
        print("FAIL", p)
    print("ok" if not problems else f"{len(problems)} failure(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
