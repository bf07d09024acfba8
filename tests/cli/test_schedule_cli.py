"""racksim schedule: a dumped schedule replays to the same result as `racksim collective`, the checker
accepts what the registry builds and rejects a schedule with a transfer removed."""
import json
import os
import subprocess
import sys
import tempfile

RACKSIM = os.environ["RACKSIM_BIN"]


def run(*args, check=True):
    p = subprocess.run([RACKSIM, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"racksim {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


def main():
    failures = []
    request = ["--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--bytes", "64M", "--algo", "ring",
               "--calibration", "none"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ring.json")
        run("schedule", "dump", *request, "--out", path)
        doc = json.load(open(path))
        # ring all-reduce on 8 ranks: 2(n-1) steps x n segments = 112 transfers of S/n each.
        if len(doc["tasks"]) != 112 or any(t["bytes"] != 64 * 2**20 // 8 for t in doc["tasks"]):
            failures.append(f"expected 112 tasks of 8 MiB, got {len(doc['tasks'])}")
        ok = run("schedule", "check", path)
        if "correct" not in ok.stdout:
            failures.append(f"check did not accept the registry's schedule: {ok.stdout}")
        replay = json.loads(run("schedule", "run", path, "--system", "hgx-h100", "--calibration", "none").stdout)
        direct = json.loads(run("collective", *request).stdout)
        # The dump is the full schedule (its tasks named one by one); `collective` runs the ring listed by its
        # symmetry (docs/model.md section 2), which its engine note says. Everything else is the same to the byte.
        direct_note = direct["engine"].pop("note", "")
        if "listed by its symmetry" not in direct_note:
            failures.append(f"racksim collective did not run the ring listed by its symmetry: {direct_note!r}")
        replay["engine"].pop("note", None)
        if replay != direct:
            failures.append("replayed schedule differs from racksim collective:\n" + json.dumps(replay) + "\n" +
                            json.dumps(direct))
        # Remove the last all-gather transfer: some rank no longer ends with every chunk.
        doc["tasks"].pop()
        broken = os.path.join(tmp, "broken.json")
        json.dump(doc, open(broken, "w"))
        bad = run("schedule", "check", broken, check=False)
        if bad.returncode != 1 or "violation" not in bad.stderr:
            failures.append(f"a schedule missing a transfer passed the check: rc {bad.returncode} {bad.stderr}")
        missing = run("schedule", "check", os.path.join(tmp, "nope.json"), check=False)
        if missing.returncode != 2 or len(missing.stderr.strip().splitlines()) != 1:
            failures.append(f"missing file: rc {missing.returncode}, stderr {missing.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    checks = 5  # task shape, check accepts, replay equal, tampered rejected, missing file
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
