"""racksim: discrete-event simulator and performance model of NVLink rack-scale GPU systems.

The model lives in C++ (the `_racksim` extension); this package re-exports it and adds plotting
helpers only. Import with PYTHONPATH=<build>/bindings:<source>/bindings/python (see README).

    >>> import racksim
    >>> racksim.load("gb200-nvl72").summary()["gpus"]
    72
"""
from _racksim import InputError, SimulationError, System, load, systems  # noqa: F401

__all__ = ["InputError", "SimulationError", "System", "load", "systems"]
