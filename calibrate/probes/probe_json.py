"""What the Python probes (nccl_sweep.py, compute_torch.py) share, as probe_common.h does for the CUDA ones:
one JSON object per line on stdout, the header record naming the machine, the skipped record with exit 0
where the probe cannot run (no torch, no GPU), and bad arguments as one line on stderr with exit 2."""
import argparse
import datetime
import json
import socket
import sys


def emit(rec):
    print(json.dumps(rec, separators=(",", ":")), flush=True)


def nvidia_driver_release():
    try:
        with open("/proc/driver/nvidia/version") as f:
            for tok in f.readline().split():
                if tok[:1].isdigit() and "." in tok and all(c.isdigit() or c == "." for c in tok):
                    return tok
    except OSError:
        pass
    return None


def header(probe, extra=None, device=None, torch=None):
    rec = {
        "record": "header",
        "probe": probe,
        "device": device,
        "driver": nvidia_driver_release(),
        "cuda_runtime": getattr(getattr(torch, "version", None), "cuda", None) if torch else None,
        "hostname": socket.gethostname(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": sys.version.split()[0],
    }
    rec.update(extra or {})
    emit(rec)


def skip(probe, reason, detail=None, **hdr):
    header(probe, **hdr)
    rec = {"record": "skipped", "reason": reason, "scope": "probe", "probe": probe}
    if detail:
        rec["detail"] = detail
    emit(rec)
    print(f"{probe}: skipped: {reason}" + (f" ({detail})" if detail else ""), file=sys.stderr)
    sys.exit(0)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line, "probe: message (usage: ...)", and exit status 2."""

    def __init__(self, *args, probe, **kwargs):
        super().__init__(*args, **kwargs)
        self.probe = probe

    def error(self, message):
        usage = " ".join(self.format_usage().split()[1:])
        print(f"{self.probe}: {message} (usage: {usage})", file=sys.stderr)
        sys.exit(2)
