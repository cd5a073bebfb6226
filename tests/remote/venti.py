"""Start and stop ``python -m llama_cpp.server`` on 127.0.0.1 as a stand-in for a Venti server.

It serves the embedded model under the served name ``Macaron-V1-Venti`` and requires a bearer
key, like a real deployment. Used by tests/remote (a session fixture) and bench/failover.py.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.remote.faultproxy import free_port

SERVED = "Macaron-V1-Venti"


@dataclass
class Venti:
    proc: subprocess.Popen[bytes]
    port: int
    api_key: str
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_venti(model: Path, api_key: str, log: Path, *, timeout_s: float = 600.0) -> Venti:
    """Launch the server and wait until /v1/models answers. Not niced: at niceness 19 a CPU hog
    on each core left it about 1% of the machine, and one remote test took 8 minutes."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model", str(model),
        "--model_alias", SERVED,
        "--n_ctx", "1024",
        "--n_threads", "1",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--api_key", api_key,
        "--verbose", "False",
    ]  # fmt: skip
    out = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    server = Venti(proc, port, api_key, log)
    deadline = time.monotonic() + timeout_s
    headers = {"Authorization": f"Bearer {api_key}"}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{server.url}/v1/models", headers=headers, timeout=2).status_code == 200:
                _warm_up(server, headers)
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"llama_cpp.server did not come up in {timeout_s} s")


def _warm_up(server: Venti, headers: dict[str, str]) -> None:
    """One tiny request: the first one pays for paging the model in (seconds on a busy CPU)."""
    body = {"model": SERVED, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    httpx.post(f"{server.url}/v1/chat/completions", json=body, headers=headers, timeout=120)
