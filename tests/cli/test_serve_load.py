#!/usr/bin/python3
"""`racksim serve` under load, on loopback only: 200 concurrent requests, a quarter of them malformed. Every
valid answer must be byte-for-byte the CLI's stdout for the command the server says it ran (X-Racksim-Command);
every malformed one the right status with the CLI's own one-line message (or the server's, for what it refuses
itself); the server must still answer afterwards. Then the limits: a request over the wall-clock limit is
killed (504) and a request over the interactive limits refused before running (422), the server staying up;
SIGTERM stops it with status 0."""
import concurrent.futures
import json
import os
import re
import shlex
import socket
import sys
import time

from serve_helpers import Server, cli

# The sanitizer build (tests/CMakeLists.txt: 4) runs each child several times slower, and 200 requests through
# 2 workers outlasted the server's 60 s wait for a free worker (503 busy); it fires a quarter of them, still
# every valid and every malformed request at least once.
TIMEOUT_SCALE = int(os.environ.get("RACKSIM_TEST_TIMEOUT_SCALE", "1"))

VALID = [
    ("show", [("system", "gb200-nvl72")]),
    ("show", [("system", "gb200-nvl72"), ("racks", "4")]),
    ("show", [("system", "hgx-h100"), ("racks", "8")]),
    ("show", [("system", "rtx4090-pcie")]),
    ("route", [("system", "gb200-nvl72"), ("src", "gpu0"), ("dst", "gpu77"), ("racks", "2")]),
    ("fig4", [("system", "gb300-nvl72"), ("racks", "4"), ("gpus", "288"), ("bytes", "1G"), ("nvls", "1")]),
    ("fig4", [("system", "hgx-h100"), ("gpus", "8"), ("min-bytes", "1K"), ("max-bytes", "1G"), ("step-factor", "4")]),
    ("place", [("system", "gb200-nvl72"), ("mode", "numa"), ("alloc", "train0:cuda:100GB:gpu0"),
               ("alloc", "prep:cpu:1100GB"), ("alloc", "x:cuda:40GB:gpu0"), ("no-checklist", "1")]),
    ("place", [("system", "gb200-nvl72"), ("mode", "cdmm"), ("alloc", "prep:cpu:1100GB")]),
    ("imex-check", [("system", "gb200-nvl72"), ("racks", "2"), ("gpus", "0,4"), ("share", "0:4:auto"),
                    ("container-channels", "none")]),
    ("collective", [("system", "hgx-h100"), ("op", "all_reduce"), ("gpus", "8"), ("bytes", "1M"), ("algo", "ring")]),
    ("sweep", [("system", "hgx-h100"), ("op", "all_reduce"), ("gpus", "8"), ("algo", "nvls"), ("min-bytes", "1M"),
               ("max-bytes", "16M"), ("step-factor", "4"), ("calibration", "none")]),
]
# (command, params, expected HTTP status, True when the message must be the CLI's own stderr line)
MALFORMED = [
    ("show", [("system", "gb999")], 400, True),
    ("show", [("system", "gb200-nvl72"), ("racks", "0")], 400, True),
    ("route", [("system", "gb200-nvl72"), ("src", "gpu0"), ("dst", "gpu9999")], 400, True),
    ("collective", [("system", "hgx-h100"), ("op", "all_reduce"), ("gpus", "8"), ("bytes", "0")], 400, True),
    ("collective", [("system", "hgx-h100"), ("op", "all_reduce"), ("gpus", "8"), ("bytes", "1M"), ("algo", "warp")], 400, True),
    ("collective", [("system", "hgx-h100"), ("op", "all_reduce"), ("gpus", "8"), ("bytes", "1M"),
                    ("fail", "tray:0")], 422, True),
    ("fig4", [("system", "gb200-nvl72"), ("gpus", "72"), ("bytes", "1G"), ("efficiency", "1.5")], 400, True),
    ("place", [("system", "gb200-nvl72"), ("alloc", "x:cuda:40GB")], 400, True),
    ("show", [("system", "gb200-nvl72"), ("trace", "/tmp/x.json")], 400, False),
    ("show", [("system", "../topologies/gb200-nvl72.json")], 400, False),
    ("show", [("system", "gb200-nvl72"), ("racks", "1"), ("racks", "2")], 400, False),
    ("place", [("system", "gb200-nvl72"), ("no-checklist", "maybe")], 400, False),
    ("calibrate", [], 404, False),
]


def read_to_close(sock):
    """Everything the server sends before closing (one recv may end after the headers: it did under ASan)."""
    chunks = []
    while chunk := sock.recv(4096):
        chunks.append(chunk)
    return b"".join(chunks)


def fire(server, request):
    command, params = request[0], request[1]
    start = time.monotonic()
    status, body, headers = server.get("/api/" + command, params)
    return request, status, body, headers, time.monotonic() - start


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL", what)

    server = Server("--workers", "2")
    try:
        valid, malformed = max(len(VALID), 150 // TIMEOUT_SCALE), max(len(MALFORMED), 50 // TIMEOUT_SCALE)
        requests = [VALID[i % len(VALID)] for i in range(valid)] + [MALFORMED[i % len(MALFORMED)] for i in range(malformed)]
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(requests)) as pool:
            results = list(pool.map(lambda r: fire(server, r), requests))
        wall = time.monotonic() - start
        print(f"{len(results)} concurrent requests answered in {wall:.1f} s "
              f"(slowest {max(r[4] for r in results):.1f} s)")
        expected = {}  # the CLI's answer per command line, computed once
        for request, status, body, headers, _ in results:
            command_line = headers.get("X-Racksim-Command", "")
            label = f"{request[0]} {request[1]}"
            if len(request) == 2:
                check(status == 200, f"{label}: status {status}: {body[:200]}")
                if command_line not in expected:
                    expected[command_line] = cli(shlex.split(command_line)[1:])
                code, out, _ = expected[command_line]
                # exit 1 with a report: a check answering no (imex-check: the job cannot start), served as 200
                check(code in (0, 1) and out and body == out, f"{label}: body differs from `{command_line}`")
                check(headers.get("X-Racksim-Exit-Status") == str(code), f"{label}: exit status header vs CLI {code}")
                continue
            want_status, from_cli = request[2], request[3]
            check(status == want_status, f"{label}: status {status}, expected {want_status}: {body[:200]}")
            message = json.loads(body)["error"]
            check("\n" not in message, f"{label}: message is not one line: {message!r}")
            if from_cli:
                if command_line not in expected:
                    expected[command_line] = cli(shlex.split(command_line)[1:])
                code, _, err = expected[command_line]
                check(message == err.strip(), f"{label}: server says {message!r}, CLI says {err.strip()!r}")
                check({2: 400, 1: 422}.get(code) == status, f"{label}: CLI exit {code} vs HTTP {status}")
            else:
                check(message.startswith("racksim serve: "), f"{label}: {message!r}")
        print(f"{len(expected)} distinct commands compared with the CLI")
        check(server.alive(), "server not answering after the load")

        # Over the interactive limits: refused before running, with the reason.
        status, body, _ = server.get("/api/collective", [("system", "gb200-nvl72"), ("racks", "7"), ("op", "all_reduce"),
                                                         ("gpus", "504"), ("bytes", "1G"), ("algo", "ring")])
        check(status == 422 and "crosses 7 NVLink domains" in body, f"flat ring on 7 racks: {status} {body[:300]}")
        check(server.alive(), "server not answering after a refused request")

        # Not HTTP at all, an oversized request line, a client that connects and says nothing: each is dropped
        # or answered with an error, and the server keeps serving.
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"\x00\xffGARBAGE\r\n\r\n")
            try:
                reply = sock.recv(200)
            except ConnectionResetError:  # closed with our bytes unread: the kernel resets the connection
                reply = b""
        check(reply == b"" or reply.startswith(b"HTTP/1.1 400"), f"garbage request: {reply[:60]!r}")
        status, _, _ = server.get("/api/show", [("system", "x" * 10000)])
        check(status == 414, f"a 10 kB request line: status {status}, expected 414")
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:  # DNS rebinding
            sock.sendall(b"GET /api/show?system=gb200-nvl72 HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n")
            reply = read_to_close(sock)
        check(reply.startswith(b"HTTP/1.1 403") and b"Host 'evil.example:80' refused" in reply, f"foreign Host: {reply[:80]!r}")
        code, out, err = cli(["serve", "--port", str(port)])  # the port is taken: exit 2, one line
        check(code == 2 and err.count("\n") == 1 and "--port" in err and "in use" in err, f"second server on {port}: {code} {err!r}")
        idle = socket.create_connection(("127.0.0.1", port), timeout=20)
        check(server.alive(), "server answers while a client holds a silent connection")
        idle.close()

        # docs/serve.md's curl examples print what this server prints today.
        with open(os.path.join(os.environ["RACKSIM_SOURCE_DIR"], "docs", "serve.md")) as f:
            lines = f.read().splitlines()
        examples = 0
        for i, line in enumerate(lines):
            m = re.match(r"\$ curl -s 'http://127\.0\.0\.1:8080/([^']*)'( \| grep (\S+))?$", line)
            if not m:
                continue
            examples += 1
            status, body, _ = server.get(m.group(1))
            shown = [l for l in body.splitlines() if m.group(3) in l] if m.group(3) else body.splitlines()
            check(shown == lines[i + 1:i + 1 + len(shown)], f"docs/serve.md example {m.group(1)}: now {shown}")
        check(examples == 2, f"docs/serve.md has {examples} curl examples, expected 2")
    finally:
        check(server.stop() == 0, "SIGTERM did not stop the server with status 0")

    # The wall-clock limit: a sweep of 2-rack flat rings over 71 GPUs a rack (no symmetry to list the rings by:
    # every transfer simulated) takes seconds per size (~13 s each on the 2-core dev VM); with --timeout 1 it is
    # killed with its engine processes, and the server lives.
    slow = Server("--timeout", "1")
    try:
        t0 = time.monotonic()
        status, body, _ = slow.get("/api/sweep", [("system", "gb200-nvl72"), ("racks", "2"), ("op", "all_reduce"),
                                                  ("gpus", "142"), ("algo", "ring"), ("min-bytes", "1G"), ("max-bytes", "16G")])
        took = time.monotonic() - t0
        check(status == 504 and "1 s limit" in body, f"timeout: {status} {body[:300]}")
        check(took < 10, f"the timed-out request took {took:.1f} s to answer")
        check(slow.alive(), "server not answering after a timed-out request")
    finally:
        slow.stop()

    print(f"{len(failures)} failed" if failures else "all serve load checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
