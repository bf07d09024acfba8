"""`racksim sweep|goodput ... --dask ADDRESS` hands its work units to this driver (docs/dask.md).

    python3 -m racksim.dask_driver ADDRESS < {"units": [...], "desc": "sweep", "timeout_s": 10}

The C++ CLI cannot speak Dask's protocol, so it writes its work units (JSON text, as the Python API's
client= makes them) to this process's stdin; the driver connects to the scheduler at ADDRESS (giving up
after timeout_s), runs the units on its workers (racksim.work.run_units) and writes one JSON object on
stdout: {"results": [...]} in the units' order, or {"error": "one line", "status": 2|1|3} (2: bad input
or an unreachable scheduler, 1: a run that cannot happen, 3: anything else), which the CLI prints as its
own error. A tqdm bar goes to stderr when it is a terminal.
"""
import json
import logging
import os
import sys


def _answer(obj):
    sys.stdout.write(json.dumps(obj))
    sys.stdout.flush()
    return 0


def _fail(message, status):
    return _answer({"error": " ".join(str(message).split()), "status": status})


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: python3 -m racksim.dask_driver ADDRESS < units.json\n")
        return 2
    address = argv[1]
    try:
        request = json.load(sys.stdin)
        units, desc, timeout_s = request["units"], request.get("desc", ""), float(request.get("timeout_s", 10))
    except (ValueError, KeyError, TypeError) as e:
        return _fail("racksim.dask_driver: stdin is not a work request: %s" % e, 3)
    try:
        import distributed
    except ImportError as e:
        return _fail("--dask needs Python's dask.distributed (Debian package python3-distributed): %s" % e, 2)
    import _racksim
    from .work import run_units

    # Connection retries and worker failures are reported in the one error line, not as log records.
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    try:
        client = distributed.Client(address, timeout=timeout_s, set_as_default=False)
    except Exception as e:  # OSError (timed out, refused), ValueError (not an address), ...
        return _fail("--dask %s: no Dask scheduler answered there within %g s (%s: %s); allowed: the address a "
                     "dask scheduler prints, such as tcp://10.0.0.5:8786" % (address, timeout_s, type(e).__name__, e), 2)
    try:
        results = run_units(client, units, None, desc)
    except _racksim.InputError as e:
        return _fail(e, 2)
    except _racksim.SimulationError as e:
        return _fail(e, 1)
    except Exception as e:
        return _fail("--dask %s: %s: %s" % (address, type(e).__name__, e), 3)
    finally:
        client.close()
    return _answer({"results": results})


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter teardown: a Client that never connected complains from its __del__ at exit.
    os._exit(code)
