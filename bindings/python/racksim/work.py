"""Running racksim's work on a dask.distributed cluster (docs/dask.md).

A sweep or a goodput Monte Carlo called with `client=` splits into work units (JSON text that carries
every input: topology, calibration, request; models/work/work_units.hpp). Each unit runs on a worker
through `run_unit`, a plain module-level function (pickled by name; the worker needs racksim's Python
package, as here). Results come back as text holding the exact bytes of what was computed, and the C++
side reassembles them in the units' order, so the answer is the local one, byte for byte.

Dask and tqdm are imported only when used: racksim works without either.
"""
import sys

__all__ = ["run_unit", "run_units", "call", "submit_call", "progress_bar"]


def run_unit(unit):
    """One work unit, run in this process (what a Dask worker executes): its result text."""
    import _racksim

    return _racksim.run_work_unit(unit)


def call(name, kwargs):
    """`racksim.<name>(**kwargs)` of the C++ module, run in this process: a whole plan or validation as
    one unit on a worker (their searches are not split into units)."""
    import _racksim

    return getattr(_racksim, name)(**kwargs)


def progress_bar(total, progress=None, desc=""):
    """A tqdm bar on stderr, or None. progress: None = only when stderr is a terminal, True, False."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # Debian's python3-tqdm is a dependency; without it there is no bar
        return None
    return tqdm(total=total, desc=desc, unit="unit", file=sys.stderr, leave=False)


def _check_client(client):
    try:
        from distributed import Client
    except ImportError as e:
        raise ImportError("client= needs dask.distributed (Debian package python3-distributed): %s" % e) from e
    if not isinstance(client, Client):
        raise TypeError("client= takes a dask.distributed.Client (or None for this machine), not %r" % (client,))
    return client


def run_units(client, units, progress=None, desc=""):
    """Runs `units` (a list of unit texts) on the Client's workers; their results in the same order.
    A unit's racksim.InputError or SimulationError is raised here, as the local call would."""
    from distributed import as_completed

    client = _check_client(client)
    units = list(units)
    # pure=False: two equal units are still two results (a sweep may repeat a size).
    futures = client.map(run_unit, units, pure=False)
    bar = progress_bar(len(units), progress, desc)
    try:
        for future in as_completed(futures, loop=client.loop):
            if future.status == "error":
                break
            if bar is not None:
                bar.update(1)
        return client.gather(futures)
    finally:
        if bar is not None:
            bar.close()
        client.cancel(futures)


def submit_call(client, name, kwargs):
    """`_racksim.<name>(**kwargs)` on one of the Client's workers; its result (a dict)."""
    client = _check_client(client)
    return client.submit(call, name, dict(kwargs), pure=False).result()
