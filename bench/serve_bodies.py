"""Memory of ``macaron serve`` under ten 50 MB request bodies, with the body limit and without.

Run: OMP_NUM_THREADS=1 python bench/serve_bodies.py [--bodies 10] [--mb 50] [--unbounded N]

Starts ``macaron serve`` on 127.0.0.1 (the embedded model, a scratch MACARON_HOME), reads its
RSS from /proc, then posts the bodies: half with a declared Content-Length, half chunked (read
until the limit). ``--unbounded N`` also starts one with ``--max-body-bytes`` at 1 GiB (what
the server did before it had a limit) and posts N bodies there. Prints RSS before, peak while
posting, and after (5 s idle), and each status; never asserts. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024  # type: ignore[union-attr]


def start(home: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MACARON_")}
    env.update(MACARON_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    proc = subprocess.Popen(
        [sys.executable, "-m", "macaron_local.serve", "--port", "0", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = int(re.search(r":(\d+) ", proc.stdout.readline()).group(1))  # type: ignore[union-attr]
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc, port
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.5)


def body(mb: int) -> bytes:
    text = "x" * (mb << 20)
    return json.dumps({"messages": [{"role": "user", "content": text}]}).encode()


def post(port: int, data: bytes, chunked: bool) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        if chunked:
            parts = (data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20))
            conn.request("POST", "/v1/chat/completions", body=parts,
                         headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)  # fmt: skip
        else:
            conn.request("POST", "/v1/chat/completions", body=data)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except (BrokenPipeError, ConnectionResetError):
        return -1  # the server closed the connection while the body was still being sent
    finally:
        conn.close()


def run(label: str, args: list[str], n: int, mb: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start(Path(tmp), *args)
        try:
            before, peak, stop = rss_mb(proc.pid), [0.0], threading.Event()

            def sample() -> None:
                while not stop.wait(0.05):
                    peak[0] = max(peak[0], rss_mb(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            data, statuses, t = body(mb), [], time.perf_counter()
            for i in range(n):
                statuses.append(post(port, data, chunked=i % 2 == 1))
            took = time.perf_counter() - t
            time.sleep(5)
            stop.set()
            sampler.join()
            after = rss_mb(proc.pid)
        finally:
            proc.send_signal(2)
            proc.wait(120)
    print(
        f"{label}: {n} x {mb} MB in {took:.1f} s, statuses {statuses}; RSS before "
        f"{before:.0f} MB, peak {peak[0]:.0f} MB (x{peak[0] / before:.2f}), after "
        f"{after:.0f} MB (x{after / before:.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", type=int, default=10)
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--unbounded", type=int, default=0)
    args = ap.parse_args()
    run("limit 8 MiB (default)", [], args.bodies, args.mb)
    if args.unbounded:
        run("limit 1 GiB (as before)", ["--max-body-bytes", str(1 << 30)], args.unbounded, args.mb)


if __name__ == "__main__":
    main()
