"""racksim.plan(): the layout planner as a pandas DataFrame.

The numbers come from the C++ planner (`_racksim.plan`), which returns exactly the JSON that
`racksim plan --format json` prints; this module only flattens its ranked layouts into a table.

    >>> import racksim
    >>> df = racksim.plan(system="gb200-nvl72", racks=4, model="deepseek-v3",
    ...                   global_batch=4096, seq_len=4096, top=5)
    >>> df[["mesh", "step_time_s", "tokens_per_s_per_gpu"]]        # doctest: +SKIP
    >>> df.attrs["plan"]["best"]["explanation"]                      # doctest: +SKIP

Units are in the column names: *_s (seconds), *_GB (1e9 bytes), tokens_per_s (tokens per second).
"""
import _racksim

__all__ = ["plan", "layouts_frame", "layout_row", "validate_training", "training_frame"]

_DEGREES = ("gpus", "tp", "cp", "pp", "dp", "ep", "etp", "edp", "vp", "micro_batch", "micro_batches", "schedule",
            "virtual_stages", "zero_stage", "fsdp", "recompute", "offload_optimizer", "offload_activations")
_COMM_KINDS = ("tp", "ep", "cp", "pp", "dp")


def layout_row(layout):
    """One layout dict of the planner's JSON (an item of plan["layouts"], or plan["comparison"][i]["layout"])
    as a flat dict: the degrees, `mesh` (the DeviceMesh, outermost first), step_time_s, tokens_per_s,
    tokens_per_s_per_gpu, mfu (model FLOPs utilisation, 0-1), the step breakdown in seconds
    (compute_s, recompute_s, pipeline_bubble_s, communication_exposed_s, sm_contention_s = computation lost to the SMs
    that overlapped communication kernels hold, optimizer_s, offload_s),
    per parallelism kind the communication per step and the part of it not hidden behind compute
    (<kind>_comm_s, <kind>_exposed_s, <kind>_domains = NVLink domains one group spans; 0 / absent when the
    kind is not used), pipeline_layout (the chunks as Megatron's --pipeline-model-parallel-layout), megatron_args (the
    Megatron-LM arguments that run the layout, one shell-quoted line; the argv list and notes are in the JSON's
    layout["megatron_args"]), memory per GPU in GB (memory_GB = total, memory_usable_GB = HBM the job may use),
    and, for ranked layouts, the engine-checked step time and the tray-failure figures."""
    row = {k: layout[k] for k in _DEGREES if k in layout}
    row["mesh"] = layout["device_mesh"]["text"]
    for k in ("step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu", "fits_in_memory"):
        row[k] = layout[k]
    row["pipeline_layout"] = layout.get("pipeline_layout", "")
    row["megatron_args"] = layout["megatron_args"]["command_line"]
    for k, v in layout["breakdown_s"].items():
        row[k + "_s"] = v
    for kind in _COMM_KINDS:
        row[kind + "_comm_s"] = 0.0
        row[kind + "_exposed_s"] = 0.0
        row[kind + "_domains"] = 0
    for c in layout["communication"]:
        row[c["kind"] + "_comm_s"] += c["total_s"]
        row[c["kind"] + "_exposed_s"] += c["exposed_s"]
        row[c["kind"] + "_domains"] = max(row[c["kind"] + "_domains"], c["nvlink_domains"])
    mem = layout["memory_GB"]
    row["memory_GB"] = mem["total"]
    row["memory_usable_GB"] = mem["usable"]
    if "engine_check" in layout:
        row["engine_step_time_s"] = layout["engine_check"]["engine_step_time_s"]
    if "tray_failure" in layout:
        f = layout["tray_failure"]
        row["tray_failure_job_gpus_stopped"] = f["job_gpus_stopped"]
        row["tray_failure_blast_radius_gpus"] = f["blast_radius_gpus"]
        row["tray_failure_runs_on_spares"] = f["runs_on_spares"]
    return row


def layouts_frame(plan_dict):
    """The ranked layouts of a planner JSON dict (from racksim.plan's df.attrs["plan"], _racksim.plan, or
    `racksim plan --format json` read with json.load) as a DataFrame indexed by rank (1 = fastest), one
    row per layout (columns: see layout_row). The dict is kept on df.attrs["plan"]."""
    import pandas as pd

    rows = [dict(rank=layout["rank"], **layout_row(layout)) for layout in plan_dict["layouts"]]
    df = pd.DataFrame(rows).set_index("rank") if rows else pd.DataFrame()
    df.attrs["plan"] = plan_dict
    return df


def plan(*, system="gb200-nvl72", racks=None, model, global_batch, seq_len, top=10, engine_top=3, client=None,
         **options):
    """Rank the TP x EP x CP x PP x DP layouts of one training step of `model` on `racks` racks of `system`.

    system: a system id (racksim.systems()) or a topology JSON path; racks: racks (default: the system's);
    model: a model preset id (models/workload/presets) or a model JSON path; global_batch: sequences per
    step; seq_len: tokens per sequence; top: layouts reported; engine_top: of those, how many the
    discrete-event engine re-prices (0: none, faster).
    Other keyword options are those of `racksim plan`, with underscores: gpus, tp, cp, pp, dp (GPUs =
    TP x CP x PP x DP), ep, etp, edp (the MoE layers fold EP x ETP x EDP into TP x CP x DP), vp (virtual
    pipeline), tp_x_ep, micro_batch (fix a degree), pp_layout ("balanced": chunks balanced by time, the
    default; "uniform": Megatron's default split; or a Megatron --pipeline-model-parallel-layout string
    such as "Et*4|(t*4|)*14tmL"), mesh_order ("auto", "pp-outer", "dp-outer"), schedule
    ("auto", "1f1b", "interleaved"), zero ("auto" or 0-3), fsdp (ZeRO-3 shard group: 0 = FSDP, N = HSDP),
    recompute ("auto", "none", "selective", "full", "selective:layernorm,moe_act,...", "full:block:4"),
    offload ("auto", "none", "optimizer", "activations", "both"), precision ("bf16", "fp8-ds", "fp8-cs",
    "fp8-block", "mxfp8", "nvfp4"), moe_imbalance (busiest EP rank / mean; None: 1.2) or force_balanced=True,
    moe_dispatcher ("alltoall", "deepep", "hybridep"), ep_overlap (the recipe overlaps the all-to-all),
    mtp (train multi-token prediction), grad_dtype ("fp32", "bf16"), memory_reserve (HBM fraction kept
    free), compare (system ids as "a,b", a list, or None), failures (False: skip the tray-failure
    analysis), calibration ("default", "none" or a file), compute_fit (a fitted compute file).

    Returns a pandas DataFrame of the ranked layouts (see layout_row for the columns, units in their
    names), indexed by rank; df.attrs["plan"] holds the planner's whole answer, the same dict as
    `racksim plan --format json`: "best" (explanation, DeviceMesh, rank -> tray -> rack map), "degraded"
    (NVL68/NVL64 after losing trays), "comparison" (the same model and GPU count on other systems),
    "search" (how many layouts were considered and why the others were rejected).
    Raises racksim.InputError on bad input (unknown model or system, degrees that do not divide the GPUs).
    client: a dask.distributed Client; the plan then runs on one of its workers, as one unit (the search is
    not split), with the same answer byte for byte (docs/dask.md). Paths must be valid on the worker.
    """
    kwargs = dict(system=_plain(system), racks=racks, model=_plain(model), global_batch=global_batch, seq_len=seq_len,
                  top=top, engine_top=engine_top, **options)
    if client is not None:
        from .work import submit_call

        result = submit_call(client, "plan", kwargs)
    else:
        result = _racksim.plan(**kwargs)
    return layouts_frame(result)


def _plain(value):
    """A pathlib.Path as str (what a worker elsewhere unpickles the same way); other values unchanged."""
    return value.__fspath__() if hasattr(value, "__fspath__") else value


def validate_training(rows, *, leave_one_model_out=True, leave_one_system_out=False, layouts=False, calibration="default",
                      fit_probes=None, client=None):
    """Every published training run of `rows` (a file like calibrate/training/published_training_throughput.json)
    priced with its layout pinned: the dict of `racksim plan --validate ROWS --format json` ("rows" with
    published and predicted tokens/s/GPU and the error, "overall" and per-group median and worst |error|,
    "excluded" records with the reason, "layouts" with the planner's own best layout per job when
    layouts=True). leave_one_model_out=False uses the shipped fit for every row (in-sample);
    leave_one_system_out=True holds out each system instead of each model. fit_probes: probe directories of Hopper or
    Blackwell GPUs (calibrate/run_probes.sh's output) the held-out refits read instead of the shipped ones, as
    `--fit-probes`.
    client: a dask.distributed Client; the validation then runs on one of its workers, as one unit (docs/dask.md)."""
    if isinstance(fit_probes, (str, bytes)) or hasattr(fit_probes, "__fspath__"):
        fit_probes = [fit_probes]
    kwargs = dict(rows=_plain(rows), leave_one_model_out=leave_one_model_out, leave_one_system_out=leave_one_system_out,
                  layouts=layouts, calibration=calibration, fit_probes=[_plain(p) for p in (fit_probes or [])])
    if client is not None:
        from .work import submit_call

        return submit_call(client, "validate_training", kwargs)
    return _racksim.validate_training(**kwargs)


def price_published_layouts(rows, *, calibration="default"):
    """Every record's layout of `rows` (a file like calibrate/training/published_training_throughput.json) pinned
    and priced with the shipped fit, measured or not: the dict of `racksim plan --validate ROWS --every-layout
    --format json` ("rows" with the predicted tokens/s/GPU, whether the memory model fits it and its memory by part in
    GB beside the usable HBM, or "not_pinnable" with the reason; "records", "pinned", "fit_in_memory" counts)."""
    return _racksim.price_published_layouts(rows=_plain(rows), calibration=calibration)


def training_frame(validation):
    """The "rows" of a validate_training dict as a DataFrame indexed by the record's position in the file."""
    import pandas as pd

    df = pd.DataFrame(validation["rows"]).set_index("index")
    df.attrs["validation"] = validation
    return df
