"""Starting and stopping `racksim serve` for the serve tests (loopback only), and the CLI they compare it with."""
import json
import os
import re
import shlex
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

BIN = os.environ["RACKSIM_BIN"]


class Server:
    """`racksim serve --port 0` in a child process; .url is the address it printed."""

    def __init__(self, *extra):
        self.proc = subprocess.Popen([BIN, "serve", "--port", "0", "--quiet", *extra], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"racksim serve printed {line!r}, stderr {self.proc.stderr.read()!r}")
        self.url = match.group(0)

    def get(self, path, params=(), timeout=120):
        """(status, body text, headers) of GET path?params (params: list of (key, value))."""
        url = self.url + path.lstrip("/") + ("?" + urllib.parse.urlencode(list(params)) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as res:
                return res.status, res.read().decode(), dict(res.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(), dict(e.headers)

    def alive(self):
        return self.proc.poll() is None and self.get("/healthz", timeout=10)[0] == 200

    def stop(self):
        """SIGTERM; returns the exit status (0 when it stopped cleanly)."""
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def cli(args):
    """(exit status, stdout, stderr) of racksim with these arguments."""
    run = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout, run.stderr


def cli_command(command_line):
    """Runs a displayed command line ("racksim collective --system ..."); returns its parsed JSON."""
    words = shlex.split(command_line)
    assert words[0] == "racksim", command_line
    status, out, err = cli(words[1:])
    # exit 1 with a report on stdout: a check answering no (imex-check: the job cannot start)
    if status != 0 and not (status == 1 and out):
        raise AssertionError(f"{command_line} exited {status}: {err}")
    return json.loads(out)
