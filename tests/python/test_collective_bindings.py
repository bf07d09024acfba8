"""Simulation from Python: the same values as the CLI, closed forms where the engine has one, bad input as
racksim.InputError (a ValueError), and many simulations in one process (SimGrid allows one engine per
process; racksim forks one per run)."""
import json
import os
import subprocess

import pytest

import racksim

RACKSIM_BIN = os.environ["RACKSIM_BIN"]
GiB = 1 << 30


def cli(*args):
    return subprocess.run([RACKSIM_BIN, *args], capture_output=True, text=True)


def cli_has(command):
    listed = cli("--help").stdout.split("Subcommands:")[-1].split()
    return command in listed


needs_collective_cli = pytest.mark.skipif(not cli_has("collective"), reason="`racksim collective` is not built yet")
needs_sweep_cli = pytest.mark.skipif(not cli_has("sweep"), reason="`racksim sweep` is not built yet")


@pytest.fixture(scope="module")
def gb200():
    return racksim.load("gb200-nvl72")


@pytest.fixture(scope="module")
def h100():
    return racksim.load("hgx-h100")


# (system, racks, op, gpus, bytes, extra python kwargs, the same as CLI options)
CLI_CASES = [
    ("gb200-nvl72", 1, "all_reduce", 72, "1G", {"algo": "nvls", "calibration": "none"},
     ["--algo", "nvls", "--calibration", "none"]),
    ("gb200-nvl72", 1, "all_reduce", 72, "64M", {"algo": "ring"}, ["--algo", "ring"]),
    ("hgx-h100", 1, "all_gather", 8, "256M", {"algo": "auto"}, ["--algo", "auto"]),
    ("hgx-h100", 2, "all_reduce", 16, "32M", {"algo": "hierarchical", "calibration": "none"},
     ["--algo", "hierarchical", "--calibration", "none"]),
    ("gb200-nvl72", 1, "all_to_all", 16, "16M",
     {"algo": "direct", "fail": ["switch-tray:0"], "partition_mode": "adaptive-bandwidth"},
     ["--algo", "direct", "--fail", "switch-tray:0", "--partition-mode", "adaptive-bandwidth"]),
    ("gb200-nvl72", 2, "all_reduce", 144, "64M", {"algo": "hierarchical", "fail": "nic:0", "calibration": "none"},
     ["--algo", "hierarchical", "--fail", "nic:0", "--calibration", "none"]),
    # CollNet (IB SHARP): NCCL's choice with NCCL_COLLNET_ENABLE=1 (NVLS over CollNet on 4 B200 nodes), and Chain.
    ("hgx-b200", 4, "all_reduce", 32, "1G", {"collnet": True}, ["--collnet", "on"]),
    ("hgx-b200", 4, "all_reduce", 32, "1G", {"algo": "collnet_chain"}, ["--algo", "collnet_chain"]),
    # NCCL 2.27's tuner tables: the Tree on 32 channels at 2 x 36.0 GB/s each (2.28: 16 at 24).
    ("hgx-b200", 4, "all_reduce", 32, "1G", {"algo": "tree", "nvls": False, "nccl_version": "2.27.3"},
     ["--algo", "tree", "--nvls", "off", "--nccl-version", "2.27.3"]),
]


@needs_collective_cli
@pytest.mark.parametrize("system,racks,op,gpus,size,kwargs,options", CLI_CASES)
def test_collective_equals_cli_json(system, racks, op, gpus, size, kwargs, options):
    py = racksim.load(system, racks=racks).collective(op, gpus, size, **kwargs)
    run = cli("collective", "--system", system, "--racks", str(racks), "--op", op, "--gpus", str(gpus),
              "--bytes", size, "--format", "json", *options)
    assert run.returncode == 0, run.stderr
    assert py == json.loads(run.stdout)  # same writer: every key and every value identical


@needs_sweep_cli
def test_sweep_equals_cli_json(h100):
    df = h100.sweep("all_reduce", 8, "1K", "64M", step_factor=4, algo="ring", calibration="none")
    run = cli("sweep", "--system", "hgx-h100", "--op", "all_reduce", "--gpus", "8", "--min-bytes", "1K",
              "--max-bytes", "64M", "--step-factor", "4", "--algo", "ring", "--calibration", "none",
              "--format", "json")
    assert run.returncode == 0, run.stderr
    assert df.to_dict("records") == json.loads(run.stdout)


def test_result_keys_and_units(gb200):
    r = gb200.collective("all_reduce", 72, "1G", algo="nvls", calibration="none")
    for key in ["system", "racks", "op", "algo", "gpus", "bytes", "chunk_bytes", "time_us", "algbw_GBps",
                "busbw_GBps", "phases", "links", "calibration", "failures"]:
        assert key in r, key
    assert (r["system"], r["racks"], r["op"], r["algo"], r["gpus"], r["bytes"]) == \
        ("gb200-nvl72", 1, "all_reduce", "nvls", 72, GiB)
    assert r["calibration"] == "none"
    # nccl-tests' rules: algbw = S / t, busbw = algbw * 2(n-1)/n (rounded to 6 significant digits).
    assert r["algbw_GBps"] == pytest.approx(GiB / (r["time_us"] * 1e-6) / 1e9, rel=1e-5)
    assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 2 * 71 / 72, rel=1e-5)


def test_nvls_against_the_course_model_and_nccls_cap(gb200):
    # Seed course s7: NVLS moves about S each way in one switch round trip: t ~ S / 900 GB/s = 1193 us, a
    # lower bound. NCCL caps NVLS all-reduce at heads x bwIntra x nvlsEfficiency (tuning.cc:285-300), about half
    # of the ports' rate: full NVL72 racks measure 835-919 GB/s busbw at 4-16 GiB (CoreWeave's GB200 and
    # DataCrunch's GB300 nccl-tests, calibrate/data/public_collectives.json), so the
    # time sits near twice the course's figure, and the engine and the closed form agree on it.
    r = gb200.collective("all_reduce", 72, GiB, algo="nvls", calibration="none")
    lower = GiB / 900e9 * 1e6
    assert 1.5 * lower < r["time_us"] < 2.2 * lower
    assert r["protocol"] == "Simple" and r["channels"] == 24
    closed = gb200.analytic("all_reduce", 72, GiB, algo="nvls", calibration="none")
    assert r["time_us"] == pytest.approx(closed["time_us"], rel=0.02)


def test_ring_close_to_closed_form(h100):
    # Ring on 8 H100s at vendor peak: 2(n-1)/n * S / 450 GB/s, plus 2(n-1) steps of small latency.
    r = h100.collective("all_reduce", 8, GiB, algo="ring", calibration="none")
    closed = 2 * 7 / 8 * GiB / 450e9 * 1e6
    assert closed < r["time_us"] < 1.02 * closed


def test_switch_tray_down_costs_18_over_16(gb200):
    # DESIGN s3 / issue 3: one switch tray down leaves each GPU 16 of its 18 NVLinks, in the partition's
    # adaptive-bandwidth mode (NMX-M Partition Health); in the default full-bandwidth mode the partition stops.
    ok = gb200.collective("all_reduce", 72, GiB, algo="nvls", calibration="none")
    degraded = gb200.collective("all_reduce", 72, GiB, algo="nvls", calibration="none", fail="switch-tray:0",
                                partition_mode="adaptive-bandwidth")
    assert degraded["failures"] == ["switch-tray:0"]
    assert degraded["time_us"] / ok["time_us"] == pytest.approx(18 / 16, rel=0.01)
    with pytest.raises(racksim.SimulationError, match="UNHEALTHY"):
        gb200.collective("all_reduce", 72, GiB, algo="nvls", calibration="none", fail="switch-tray:0")
    with pytest.raises(racksim.InputError, match="partition_mode"):
        gb200.collective("all_reduce", 72, GiB, fail="switch-tray:0", partition_mode="user-action")


def test_partitions_from_load():
    one = racksim.load("gb200-nvl72", partitions="a=trays:0-2")
    three = racksim.load("gb200-nvl72", partitions="3x1")
    assert three.summary()["nvlink_domains"] == 3
    t1 = one.collective("all_reduce", 12, GiB, calibration="none")["time_us"]
    r3 = three.collective("all_reduce", 12, GiB, calibration="none")
    # NCCL across 3 nodes of 4 GPUs at 1 GiB runs rings (its tuner, models/nccl): never racksim's hierarchical.
    assert r3["algo"] == "ring"
    assert r3["time_us"] > 5 * t1  # NIC-bound against NVLink-bound (tests/unit/engine/test_partitioned_collectives)
    with pytest.raises(racksim.InputError, match="partitions"):
        racksim.load("gb200-nvl72", partitions="19x1")


def test_analytic_agrees_with_engine_without_contention(h100):
    a = h100.analytic("all_reduce", 8, GiB, algo="ring", calibration="none")
    e = h100.collective("all_reduce", 8, GiB, algo="ring", calibration="none")
    assert a["model"] == "analytic" and a["algo"] == "ring"
    assert a["time_us"] == pytest.approx(e["time_us"], rel=0.02)
    top = racksim.analytic("hgx-h100", "all_reduce", 8, "1G", algo="ring", calibration="none")
    assert top["time_us"] == a["time_us"]


def test_heldout_error_of_the_class_in_engine_and_analytic_results(h100, gb200):
    # calibrate/heldout_errors.json's class of an 8-GPU Hopper NVLS all-reduce at 1 GiB, as every result
    # priced with the shipped calibration quotes it (docs/calibration.md section 4).
    table = json.load(open(os.path.join(os.environ["RACKSIM_SOURCE_DIR"], "calibrate", "heldout_errors.json")))
    row = [c for c in table["classes"] if (c["arch"], c["collective"], c["scope"], c["size"])
           == ("hopper", "all_reduce/nvls", "one NVLink domain", ">= 64 MiB")][0]
    engine = h100.collective("all_reduce", 8, "1G", algo="nvls")
    analytic = h100.analytic("all_reduce", 8, "1G", algo="nvls")
    for h in (engine["heldout_error"], analytic["heldout_error"]):
        assert h["class"] == "hopper all_reduce/nvls, one NVLink domain, >= 64 MiB"
        assert h["points"] == row["points"] >= 10
        # per cent to 0.1, halves away from zero (C++'s std::round)
        assert h["median_abs_pct"] == int(1000 * row["median_abs"] + 0.5) / 10
        assert h["worst_abs_pct"] == int(1000 * row["worst_abs"] + 0.5) / 10
        assert h["gpus_measured"] == row["gpus"]
    assert h100.collective("all_reduce", 8, "1G", algo="nvls", calibration="none")["heldout_error"] is None
    assert h100.analytic("all_reduce", 8, "1G", algo="nvls", calibration="none")["heldout_error"] is None
    # on a system with failures: measured on healthy ones only
    assert gb200.collective("all_reduce", 8, "1G", algo="ring")["heldout_error"] is not None
    assert gb200.collective("all_reduce", 8, "1G", algo="ring", fail="switch-tray:0",
                            partition_mode="adaptive-bandwidth")["heldout_error"] is None


def test_fig4_closed_forms():
    S = GiB
    ring = racksim.fig4_model(S, 72, 1, nvlink_GBps=900, nic_GBps=50, phase_latency_us=5)
    assert ring["time_us"] == pytest.approx((2 * 71 / 72 * S / 900e9 + 5e-6) * 1e6, rel=1e-5)
    # 4 racks: in-domain ring, then a ring over 4 domains on S/72 per GPU over CX-7, 3 phases of latency.
    four = racksim.fig4("gb200-nvl72", 288, S, racks=4, phase_latency_us=5)
    assert (four["gpus_per_domain"], four["domains"], four["nvlink_GBps"], four["nic_GBps"]) == (72, 4, 900, 50)
    expected = 2 * 71 / 72 * S / 900e9 + 2 * 3 / 4 * (S / 72) / 50e9 + 3 * 5e-6
    assert four["time_us"] == pytest.approx(expected * 1e6, rel=1e-5)
    # GB300's ConnectX-8 halves the cross-rack term only.
    gb300 = racksim.fig4("gb300-nvl72", 288, S, racks=4, phase_latency_us=5)
    assert gb300["nic_GBps"] == 100
    assert four["time_us"] - gb300["time_us"] == pytest.approx(2 * 3 / 4 * (S / 72) / 100e9 * 1e6, abs=0.01)
    nvls = racksim.load("gb200-nvl72").fig4(72, S, nvls=True, phase_latency_us=0, efficiency=0.8)
    assert nvls["time_us"] == pytest.approx(S / (0.8 * 900e9) * 1e6, rel=1e-5)
    # One GPU: nothing to reduce, nothing moves.
    assert racksim.fig4("rtx4090-pcie", 1, S)["time_us"] == 0


def test_topology_variant_from_a_dict():
    # A faster NIC only changes the cross-domain term: the Fig 4 model on a modified spec.
    spec = racksim.load("gb200-nvl72").spec()
    for nic in spec["nic_types"]:
        nic["bandwidth_GBps"] = 100
    fast = racksim.load(spec, racks=2)
    assert fast.id == "gb200-nvl72" and fast.gpus == 144
    assert fast.fig4(144, GiB)["time_us"] == pytest.approx(
        racksim.fig4("gb300-nvl72", 144, GiB, racks=2)["time_us"], rel=1e-5)


def test_calibration_dict_scales_bandwidth(h100):
    cal = {"schema_version": 1, "name": "half", "source": "test: every link at half its peak",
           "links": {k: {"bandwidth_efficiency": 0.5, "extra_latency_us": 0.0, "source": "test"}
                     for k in ["nvlink", "c2c", "pcie", "cpu-cpu", "nic", "ib"]},
           "algorithms": {}}
    full = h100.collective("all_reduce", 8, GiB, algo="ring", calibration="none")
    half = h100.collective("all_reduce", 8, GiB, algo="ring", calibration=cal)
    assert half["calibration"] == "half"
    assert half["time_us"] / full["time_us"] == pytest.approx(2.0, rel=0.01)


def test_sweep_sizes_and_columns(h100):
    df = h100.sweep("all_reduce", 8, 1024, "1M", step_factor=4, algo="ring", calibration="none")
    assert list(df["bytes"]) == [1024, 4096, 16384, 65536, 262144, 1048576]
    assert {"time_us", "algbw_GBps", "busbw_GBps", "algo", "phases"} <= set(df.columns)
    assert df["time_us"].is_monotonic_increasing


def test_trace_written(tmp_path, h100):
    # Chrome/Perfetto trace: one track per GPU and one per busy link, as `racksim collective --trace`.
    path = tmp_path / "trace.json"
    h100.collective("all_reduce", 8, "1M", algo="ring", calibration="none", trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    tracks = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {f"r0.t0.gpu{i}" for i in range(8)} <= tracks
    assert {f"link r0.t0.gpu{i}.nvlink-port" for i in range(8)} <= tracks
    assert any(e.get("ph") == "X" for e in events)


def test_sweep_jobs_give_the_same_frame(h100):
    one = h100.sweep("all_reduce", 8, "1K", "16M", step_factor=8, algo="nvls", calibration="none", jobs=1)
    two = h100.sweep("all_reduce", 8, "1K", "16M", step_factor=8, algo="nvls", calibration="none", jobs=2)
    default = h100.sweep("all_reduce", 8, "1K", "16M", step_factor=8, algo="nvls", calibration="none")  # the cores, <= 4
    assert one.to_dict("records") == two.to_dict("records") == default.to_dict("records")


def test_load_by_path_equals_load_by_id(tmp_path):
    spec = racksim.load("gb300-nvl72").spec()
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(spec))
    by_path = racksim.load(path, racks=2).collective("all_reduce", 144, "64M", algo="hierarchical", calibration="none")
    by_id = racksim.load("gb300-nvl72", racks=2).collective("all_reduce", 144, "64M", algo="hierarchical",
                                                            calibration="none")
    assert by_path == by_id


def test_parse_bytes():
    assert racksim.parse_bytes("1G") == GiB
    assert racksim.parse_bytes("1GiB") == GiB
    assert racksim.parse_bytes("100GB") == 100 * 10**9
    assert racksim.parse_bytes(4096) == 4096


@pytest.mark.parametrize("call,words", [
    (lambda s: s.collective("all_rduce", 72, "1G"), ["op", "all_reduce"]),
    (lambda s: s.collective("all_reduce", 72, "12Q"), ["bytes", "'12Q'"]),
    (lambda s: s.collective("all_reduce", 72, -5), ["bytes", "-5"]),
    (lambda s: s.collective("all_reduce", 72, 0), ["0"]),
    (lambda s: s.collective("all_reduce", 0, "1G"), ["gpus"]),
    (lambda s: s.collective("all_reduce", 73, "1G"), ["gpus", "73"]),
    (lambda s: s.collective("all_reduce", 72, "1G", algo="fastest"), ["fastest", "ring"]),
    (lambda s: s.collective("all_reduce", 72, "1G", fail="tray-3"), ["tray-3"]),
    (lambda s: s.collective("all_reduce", 72, "1G", calibration="/no/such/calibration.json"), ["calibration.json"]),
    (lambda s: s.sweep("all_reduce", 72, "1G", "1M"), ["max_bytes"]),
    (lambda s: s.sweep("all_reduce", 72, "1K", "1M", step_factor=1), ["step_factor"]),
    (lambda s: s.sweep("all_reduce", 8, "1K", "1M", jobs=0), ["jobs", "0"]),
    (lambda s: s.sweep("all_reduce", 8, "1K", "1M", jobs=True), ["jobs", "True"]),
    (lambda s: s.sweep("all_reduce", 8, "1K", "1M", jobs=2, model="analytic"), ["jobs > 1", "analytic"]),
    (lambda s: racksim.load("gb200-nvl72", racks=2).collective("all_reduce", 144, "1G", algo="nvls"),
     ["nvls", "NVLink domain"]),
    (lambda s: racksim.fig4("gb200-nvl72", 72, "1G", efficiency=1.5), ["efficiency"]),
    (lambda s: racksim.analytic("gb999", "all_reduce", 8, "1G"), ["gb999"]),
])
def test_bad_input_raises_input_error(gb200, call, words):
    with pytest.raises(racksim.InputError) as info:
        call(gb200)
    assert isinstance(info.value, ValueError)
    for word in words:
        assert word in str(info.value)


def test_rank_on_failed_tray_is_a_simulation_error(gb200):
    with pytest.raises(racksim.SimulationError, match="tray"):
        gb200.collective("all_reduce", 72, "1M", algo="ring", fail="tray:3")
    assert issubclass(racksim.SimulationError, RuntimeError)


def test_thirty_simulations_in_one_process(gb200, h100):
    # Alternate two systems; every repeat of a request gives the identical dict (fresh engine each run).
    sizes = ["64K", "1M", "16M"]
    first = {}
    for i in range(30):
        system, gpus = (gb200, 72) if i % 2 == 0 else (h100, 8)
        size = sizes[(i // 2) % 3]
        r = system.collective("all_reduce", gpus, size, algo="ring", calibration="none")
        key = (system.id, size)
        first.setdefault(key, r)
        assert r == first[key]
    assert len(first) == 6
    assert first[("gb200-nvl72", "16M")]["time_us"] > first[("gb200-nvl72", "1M")]["time_us"]
