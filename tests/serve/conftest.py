"""``macaron serve`` in a subprocess on 127.0.0.1, on the real embedded model, fast profile."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# tall-local with short answers (the approach of tests/turns/conftest.py), and one specialist (L3)
# allowed long answers so a client can leave in the middle of one.
SERVE_PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "serve-fast"
version = "1.0.0"
description = "tall-local with short answers, for the server tests"

[summary]
max_tokens = 24

[sampling.defaults]
temperature = 0.0
max_tokens = 24

[sampling.overrides.L3]
max_tokens = 600
"""
TOKEN = "test-token-0123456789abcdef"


def write_serve_profile(home: Path) -> str:
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "serve-fast.toml").write_text(SERVE_PROFILE)
    return "serve-fast"


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MACARON_")}
    env.update(MACARON_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.update(extra)
    return env


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str
    home: Path
    log: Path

    @property
    def db(self) -> Path:
        return self.home / "data" / "macaron.db"

    def health(self) -> tuple[int, dict]:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT: uvicorn's graceful shutdown
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_server(home: Path, *args: str, env: dict[str, str] | None = None) -> Server:
    """Start ``python -m macaron_local.serve --port 0`` and wait until /health says 200."""
    log = home / "serve.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "macaron_local.serve", "--port", "0", *args],
        env=env or server_env(home),
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    found = re.search(r"http://127\.0\.0\.1:\d+", line)
    if not found:
        proc.wait(30)
        raise AssertionError(f"no address printed: {line!r}\n{log.read_text()}")
    server = Server(proc, found.group(0), home, log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            status, body = server.health()
        except (TimeoutError, urllib.error.URLError, ConnectionError):
            assert proc.poll() is None, log.read_text()
            continue  # a busy machine: the loading server did not answer in time, ask again
        if status == 200:
            return server
        assert proc.poll() is None, log.read_text()
        assert body["status"] == "loading", body
        time.sleep(0.2)
    server.stop()
    raise AssertionError("the server did not get ready")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("serve-home")
    profile = write_serve_profile(home)
    srv = start_server(home, "--profile", profile, "--concurrency", "2", "--queue", "8")
    yield srv
    assert srv.stop() == 0, srv.log.read_text()
