"""``macaron serve`` refuses unsafe or impossible starts before it binds or loads anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.serve.conftest import server_env


def run_serve(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "macaron_local.serve", *args],
        env=server_env(home, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_refuses_to_listen_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    done = run_serve(tmp_path, "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 1
    assert "refusing to listen on 0.0.0.0" in done.stderr
    assert "MACARON_SERVE_TOKEN" in done.stderr  # the hint says how to fix it
    assert "listening" not in done.stdout


def test_refuses_a_short_token(tmp_path: Path) -> None:
    done = run_serve(tmp_path, "--port", "0", MACARON_SERVE_TOKEN="short")
    assert done.returncode == 1 and "shorter than 16" in done.stderr


def test_refuses_an_unpublished_base_before_binding(tmp_path: Path) -> None:
    done = run_serve(tmp_path, "--port", "0", "--profile", "tall-gpu")
    assert done.returncode == 1
    assert "not published yet" in done.stderr and "listening" not in done.stdout
