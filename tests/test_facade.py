"""The house rules: the runtime never imports the UI, the facade is exact, imports do nothing."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import macaron_local

RUNTIME_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(macaron_local.__path__, "macaron_local.")
    if not m.name.startswith("macaron_local.tui")
)


def _run(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MACARON_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_runtime_imports_without_textual(tmp_path: Path) -> None:
    code = (
        "import sys, importlib\n"
        "sys.modules['textual'] = None  # any import of textual now fails\n"
        f"for name in {RUNTIME_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "print('ok')\n"
    )
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(RUNTIME_MODULES) > 20


def test_importing_the_package_loads_nothing_and_creates_nothing(tmp_path: Path) -> None:
    code = (
        "import sys, json, macaron_local, macaron_local.cli\n"
        "print(json.dumps([m for m in ('llama_cpp', 'torch', 'textual') "
        "if m in sys.modules]))\n"
    )
    done = _run(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
    assert list(tmp_path.iterdir()) == []


def test_facade_all_matches_public_names() -> None:
    for name in macaron_local.__all__:
        assert getattr(macaron_local, name) is not None
    assert sorted(macaron_local.__all__) == sorted(dir(macaron_local))
