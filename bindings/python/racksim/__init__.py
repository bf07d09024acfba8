"""racksim: discrete-event simulator and performance model of NVLink rack-scale GPU systems.

The model lives in C++ (the `_racksim` extension); this package re-exports it and adds plotting
helpers only (racksim.plotting). Import with PYTHONPATH=<build>/bindings:<source>/bindings/python
(see README and docs/python.md).

    >>> import racksim
    >>> sim = racksim.load("gb200-nvl72")
    >>> sim.summary()["gpus"]
    72
    >>> sim.collective("all_reduce", 72, "1G", algo="nvls", calibration="none")["time_us"] > 0
    True

Units are in the keys: time_us (microseconds), *_GBps (1e9 bytes/s), bytes (bytes).
"""
from _racksim import (  # noqa: F401
    InputError,
    SimulationError,
    System,
    analytic,
    fig4,
    fig4_model,
    goodput,
    jobs,
    load,
    parse_bytes,
    systems,
)
from .planner import plan, price_published_layouts, training_frame, validate_training  # noqa: F401

__all__ = ["InputError", "SimulationError", "System", "analytic", "fig4", "fig4_model", "goodput", "jobs", "load",
           "parse_bytes", "systems", "plan", "price_published_layouts", "training_frame", "validate_training"]
