"""Issue 16 from Python: the calibration=None trap is an error naming both choices, a trace file is
written whole or not at all, and bad input is racksim.InputError (a ValueError) on one line."""
import os

import pytest

import racksim


@pytest.fixture(scope="module")
def h100():
    return racksim.load("hgx-h100")


@pytest.mark.parametrize("value", [None, "None", "DEFAULT"])
def test_ambiguous_calibration_is_refused_with_both_choices(h100, value):
    with pytest.raises(racksim.InputError) as e:
        h100.collective("all_reduce", 8, "1M", calibration=value)
    assert "'default'" in str(e.value) and "'none'" in str(e.value), str(e.value)
    with pytest.raises(ValueError):
        h100.analytic("all_reduce", 8, "1M", calibration=value)


@pytest.mark.parametrize("value", ["2.17.1", "2.16", "latest", ""])
def test_an_nccl_version_without_tuner_tables_is_refused(h100, value):
    for call in (h100.collective, h100.analytic):
        with pytest.raises(racksim.InputError) as e:
            call("all_reduce", 8, "1M", nccl_version=value)
        assert "nccl_version" in str(e.value) and "2.18" in str(e.value) and len(str(e.value).splitlines()) == 1


@pytest.mark.parametrize("value", [-1, 129])
def test_queue_pairs_outside_1_to_128_are_refused(h100, value):
    for call in (h100.collective, h100.analytic, h100.sweep):
        with pytest.raises(racksim.InputError) as e:
            call("all_reduce", 8, "1M", ib_qps_per_connection=value) if call != h100.sweep else call(
                "all_reduce", 8, min_bytes="1M", max_bytes="1M", ib_qps_per_connection=value)
        assert "ib_qps_per_connection" in str(e.value) and "1 to 128" in str(e.value) and len(str(e.value).splitlines()) == 1


@pytest.mark.parametrize("kwargs, words", [
    (dict(inner="ring"), ["inner", "'ring'", "algo='hierarchical'"]),
    (dict(algo="ring", outer="tree"), ["outer", "'tree'", "algo is 'ring'"]),
    (dict(algo="nvls", nvls=False), ["algo", "'nvls' with nvls=False"]),
])
def test_an_argument_that_does_not_apply_is_refused_not_ignored(h100, kwargs, words):
    for call in (h100.collective, h100.analytic):
        with pytest.raises(racksim.InputError) as e:
            call("all_reduce", 8, "1M", **kwargs)
        assert all(w in str(e.value) for w in words) and len(str(e.value).splitlines()) == 1, str(e.value)
    assert h100.analytic("all_reduce", 8, "1M", algo="hierarchical", inner="ring")["algo"] == "hierarchical"


def test_a_root_is_only_for_ops_that_have_one(h100):
    with pytest.raises(racksim.InputError) as e:
        h100.collective("all_reduce", 8, "1M", root=3)
    assert "root" in str(e.value) and "all_reduce has no root" in str(e.value), str(e.value)
    with pytest.raises(racksim.InputError) as e:
        h100.collective("broadcast", 8, "1M", root=-1)
    assert "root" in str(e.value), str(e.value)
    assert h100.collective("broadcast", 8, "1M", root=3)["algo"] == "ring"


def test_two_queue_pairs_lift_the_four_node_nvls_tree_to_its_nics():
    """As the CLI's --ib-qps-per-connection (tests/cli/test_collective_cli.py): one queue pair binds four H100 nodes'
    NVLS-tree at 16 x 0.386 x 50 GB/s a node each way, two let the NICs bind; engine and closed form agree."""
    four = racksim.load("hgx-h100", racks=4)
    one, two = four.analytic("all_reduce", 32, "8G"), four.analytic("all_reduce", 32, "8G", ib_qps_per_connection=2)
    assert two["busbw_GBps"] > 1.15 * one["busbw_GBps"]
    engine = four.collective("all_reduce", 32, "8G", ib_qps_per_connection=2)
    assert abs(engine["busbw_GBps"] / two["busbw_GBps"] - 1) < 0.01


def test_default_is_spelt_default(h100):
    assert h100.collective("all_reduce", 8, "1M")["calibration"] == h100.collective(
        "all_reduce", 8, "1M", calibration="default")["calibration"]
    assert h100.collective("all_reduce", 8, "1M", calibration="none")["calibration"] == "none"


def test_trace_of_a_failed_run_leaves_nothing(h100, tmp_path):
    trace = tmp_path / "trace.json"
    with pytest.raises(racksim.InputError):
        h100.collective("all_reduce", 8, "1M", algo="rign", trace=trace)
    assert os.listdir(tmp_path) == []
    h100.collective("all_reduce", 8, "1M", algo="ring", trace=trace)
    assert trace.read_text().startswith("{") and os.listdir(tmp_path) == ["trace.json"]


def test_trace_to_a_bad_path_is_an_input_error(h100, tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(racksim.InputError) as e:
        h100.collective("all_reduce", 8, "1M", trace=tmp_path / "file" / "trace.json")
    assert "Not a directory" in str(e.value)


def test_messages_are_one_line(h100):
    with pytest.raises(racksim.InputError) as e:
        h100.collective("all\nreduce", 8, "1M")
    assert "\n" not in str(e.value) and "all\\nreduce" in str(e.value)


def test_sizes_are_whole_elements_per_rank_as_nccl_tests_runs_them():
    rack = racksim.load("gb200-nvl72")
    assert rack.analytic("all_gather", 72, 1024)["bytes"] == 864  # 3 floats per rank x 72
    swept = rack.sweep("all_gather", 72, min_bytes=8, max_bytes=4096, model="analytic")
    assert list(swept["bytes"]) == [288, 864, 2016, 4032]  # 8-256 B: no float per rank, left out
    with pytest.raises(racksim.InputError) as e:
        rack.analytic("all_gather", 72, 100)
    assert "288 B" in str(e.value), str(e.value)


# Session 45: these arguments reached pybind11's own conversion, which raised a RuntimeError ("Unable to cast
# Python instance to C++ type") naming neither the argument nor what it takes. Each is now racksim.InputError
# (a ValueError) on one line naming the argument and the value; one case per argument.

@pytest.mark.parametrize("name, call", [
    ("channels", lambda s: s.collective("all_reduce", 8, "1M", channels=2**63)),
    ("root", lambda s: s.collective("broadcast", 8, "1M", root=2**70)),
    ("jobs", lambda s: s.sweep("all_reduce", 8, "1K", "1M", jobs=2**70)),
    ("progress", lambda s: s.sweep("all_reduce", 8, "1K", "1M", progress="yes")),
    ("inner", lambda s: racksim.load("gb200-nvl72", racks=2).collective("all_reduce", 144, "1M", algo="hierarchical", inner=5)),
    ("outer", lambda s: racksim.load("gb200-nvl72", racks=2).analytic("all_reduce", 144, "1M", algo="hierarchical", outer=[])),
    ("racks", lambda s: racksim.fig4("gb200-nvl72", 72, "1G", racks="")),
    ("racks", lambda s: racksim.fig4("gb200-nvl72", 72, "1G", racks=2.0)),
    ("racks", lambda s: racksim.analytic(s, "all_reduce", 8, "1M", racks=2**70)),
    ("nic_GBps", lambda s: racksim.fig4("gb200-nvl72", 144, "1G", racks=2, nic_GBps="x")),
    ("nic_GBps", lambda s: racksim.fig4("gb200-nvl72", 144, "1G", racks=2, nic_GBps=10**400)),
    ("nvlink_GBps", lambda s: s.fig4(8, "1G", nvlink_GBps=[])),
    ("restart_s", lambda s: racksim.jobs("shared-fabric", restart_s="x")),
    ("partition_mode", lambda s: racksim.jobs("shared-fabric", partition_mode=5)),
    ("repair_h", lambda s: racksim.goodput(gpus=72, step_s=1.0, checkpoint_bytes="1T", trials=2, repair_h="x")),
    ("interval_s", lambda s: racksim.goodput(gpus=72, step_s=1.0, checkpoint_bytes="1T", trials=2, interval_s=True)),
])
def test_a_wrongly_typed_argument_is_an_input_error_naming_it(h100, name, call):
    with pytest.raises(racksim.InputError) as e:
        call(h100)
    message = str(e.value)
    assert message.startswith(name + ": invalid value ") and len(message.splitlines()) == 1, message


def test_numpy_numbers_are_taken_as_python_ones(h100):
    """What a notebook passes from a DataFrame: numpy's integers and floats are ints and floats; numpy's bool is not."""
    np = pytest.importorskip("numpy")
    assert racksim.fig4("gb200-nvl72", 144, "1G", racks=np.int64(2)) == racksim.fig4("gb200-nvl72", 144, "1G", racks=2)
    assert racksim.fig4("gb200-nvl72", 144, "1G", racks=2, nic_GBps=np.float32(100))["nic_GBps"] == 100
    assert h100.collective("all_reduce", 8, "1M", channels=np.int32(4))["channels"] == 4
    with pytest.raises(racksim.InputError) as e:
        racksim.fig4("gb200-nvl72", 144, "1G", racks=np.bool_(True))
    assert str(e.value).startswith("racks: invalid value True"), str(e.value)


@pytest.mark.parametrize("name, call", [
    ("bytes", lambda s: s.collective("all_reduce", 8, "2T")),
    ("protocol", lambda s: s.analytic("all_reduce", 8, "1M", protocol="LL256")),
    ("fail", lambda s: s.collective("all_reduce", 8, "1M", fail="tray:99")),
    ("racks", lambda s: racksim.load("hgx-h100", racks=0)),
    ("step_s", lambda s: racksim.goodput(64, step_s=float("nan"), checkpoint_bytes="1G")),
    ("global_batch", lambda s: racksim.plan(system="hgx-h100", racks=1, model="llama-3.1-8b", global_batch=0, seq_len=4096)),
])
def test_a_check_shared_with_the_cli_names_the_python_argument(h100, name, call):
    """The library's checks name the CLI's flags (--bytes); the module's translator names Python's arguments."""
    with pytest.raises(racksim.InputError) as e:
        call(h100)
    assert str(e.value).startswith(name + ": invalid value "), str(e.value)
