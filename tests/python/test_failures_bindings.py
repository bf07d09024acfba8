"""Jobs side by side and goodput from Python: the same JSON as `racksim jobs` / `racksim goodput`, a job mix
given as a dict, and bad input as racksim.InputError (a ValueError)."""
import json
import os
import pathlib
import subprocess

import pytest

import racksim

RACKSIM_BIN = os.environ["RACKSIM_BIN"]
SOURCE = pathlib.Path(os.environ["RACKSIM_SOURCE_DIR"])
SCENARIO = SOURCE / "scenarios" / "operator-tray7.json"


def cli(*args):
    return subprocess.run([RACKSIM_BIN, *args], capture_output=True, text=True)


def test_jobs_equals_cli_json():
    py = racksim.jobs(SCENARIO, partition_mode="adaptive-bandwidth")
    run = cli("jobs", str(SCENARIO), "--partition-mode", "adaptive-bandwidth", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert py == json.loads(run.stdout)


def test_jobs_from_a_dict_with_failures():
    mix = json.loads(SCENARIO.read_text())
    mix["failures"] = []
    healthy = racksim.jobs(mix)
    assert "failure" not in healthy
    r = racksim.jobs(mix, fail=["gpu:40"], restart_s=60)
    fates = {j["name"]: j for j in r["failure"]["jobs"]}
    assert fates["b32"]["fate"] == "dies" and "GPU 40" in fates["b32"]["reason"]
    assert fates["a32"]["fate"] == fates["big72"]["fate"] == "continues"
    assert r["failure"]["recovery"]["restart"]["s"] == 60


def test_goodput_equals_cli_json_and_is_deterministic():
    kwargs = dict(gpus=4608, step_s=10, checkpoint_bytes="5700GB", spare_trays=2, trials=50)
    a = racksim.goodput(**kwargs)
    assert a == racksim.goodput(**kwargs)
    run = cli("goodput", "--gpus", "4608", "--step-s", "10", "--checkpoint-bytes", "5700GB", "--spare-trays", "2",
              "--trials", "50", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert a == json.loads(run.stdout)
    three = racksim.goodput(compare=True, **kwargs)
    assert [x["label"].split()[0] for x in three] == ["gb200-nvl72", "gb200-nvl72", "hgx-b200"]


@pytest.mark.parametrize("call, words", [
    (lambda: racksim.jobs({"schema_version": 1, "system": "gb200-nvl72", "jobs": [], "x": 1}), ["'x'"]),
    (lambda: racksim.jobs(42), ["mix"]),
    (lambda: racksim.jobs(SCENARIO, fail="tray"), ["fail: ", "'tray'"]),
    (lambda: racksim.goodput(64, step_s=1, checkpoint_bytes="1G", unit="shelf"), ["unit: ", "'shelf'"]),
    (lambda: racksim.goodput(64, checkpoint_bytes="1G"), ["step_s: "]),
    (lambda: racksim.goodput(64, step_s=float("nan"), checkpoint_bytes="1G"), ["step_s: ", "nan"]),
    (lambda: racksim.goodput(64, step_s=1, checkpoint_bytes="1G", spare_trays=-1), ["spare_trays: ", "-1"]),
])
def test_bad_input_is_input_error(call, words):
    """The library's checks name the CLI's flags (--step-s); from Python the argument is named as Python spells it
    (session 45: they read "--step-s: invalid value nan")."""
    with pytest.raises(racksim.InputError) as e:
        call()
    assert all(w in str(e.value) for w in words) and "--" not in str(e.value).split(":")[0], str(e.value)
