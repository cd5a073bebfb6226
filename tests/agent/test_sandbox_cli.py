"""``macaron sandbox run FILE``: the sandbox driven from outside, as a plugin author does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TIGHT = """schema_version = 1
extends = "tall-local"

[profile]
id = "tight"
version = "1"
description = "tall-local with a one-second CPU budget per block"

[repl.limits]
cpu_seconds = 1.0
wall_seconds = 5.0
"""


def _macaron(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from macaron_local.cli import main; main()", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def tight(_isolated_home: Path) -> Path:
    folder = _isolated_home / "config" / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tight.toml"
    path.write_text(TIGHT)
    return path


def test_prints_what_the_file_printed_and_reaches_the_tools(tmp_path: Path) -> None:
    script = tmp_path / "ok.py"
    script.write_text("print('hello from the sandbox')\nprint(units.convert(100, 'C', 'F'))\n")
    done = _macaron("sandbox", "run", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["hello from the sandbox", "212.0"]


def test_a_refused_access_exits_1_with_the_reason(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    script = tmp_path / "peek.py"
    script.write_text(f"print(open({str(secret)!r}).read())\n")
    for extra in ((), ("--no-audit-hook",)):
        done = _macaron("sandbox", "run", *extra, str(script), cwd=tmp_path)
        assert done.returncode == 1
        assert "TOP SECRET" not in done.stdout
        assert "sandbox: the code raised" in done.stderr
    # without the hook the kernel answers: the file is simply not there
    assert "FileNotFoundError" in done.stderr


def test_a_limit_exits_3_with_the_reason(tmp_path: Path, tight: Path) -> None:
    script = tmp_path / "spin.py"
    script.write_text("while True:\n    pass\n")
    done = _macaron("sandbox", "run", "--profile", "tight", str(script), cwd=tmp_path)
    assert done.returncode == 3
    assert "stopped (timeout)" in done.stderr and "more than 1s of CPU" in done.stderr
