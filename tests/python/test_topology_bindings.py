"""The bindings give the same numbers as the CLI and raise racksim.InputError on bad input."""
import json
import os
import subprocess

import pytest

import racksim

RACKSIM_BIN = os.environ["RACKSIM_BIN"]


def cli_json(*args):
    out = subprocess.run([RACKSIM_BIN, *args, "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_systems_match_cli():
    assert racksim.systems() == cli_json("systems")


@pytest.mark.parametrize("racks", [1, 4])
def test_summary_matches_cli(racks):
    py = racksim.load("gb200-nvl72", racks=racks).summary()
    cli = cli_json("show", "gb200-nvl72", "--racks", str(racks))
    assert py.keys() == cli.keys()
    for key, value in cli.items():
        # the CLI's JSON rounds to 6 significant digits (cli round_significant): up to 5e-6 relative
        assert py[key] == pytest.approx(value, rel=5e-6), key
    assert py["gpus"] == 72 * racks


def test_route_matches_cli():
    py = racksim.load("gb200-nvl72", racks=2).route("gpu0", "gpu100")
    cli = cli_json("route", "gb200-nvl72", "gpu0", "gpu100", "--racks", "2")
    assert [h["kind"] for h in py["hops"]] == [h["kind"] for h in cli["hops"]]
    assert py["bottleneck_GBps"] == pytest.approx(50.0)  # ConnectX-7, seed section 7


def test_bad_input_raises_input_error_a_value_error():
    with pytest.raises(racksim.InputError, match="unknown system"):
        racksim.load("no-such-system")
    with pytest.raises(ValueError, match="racks"):
        racksim.load("gb200-nvl72", racks=0)
    with pytest.raises(racksim.InputError, match="gpu9999"):
        racksim.load("gb200-nvl72").route("gpu0", "gpu9999")
    with pytest.raises(racksim.InputError, match="the source itself"):
        racksim.load("gb200-nvl72").route("gpu0", "r0.t0.gpu0")
