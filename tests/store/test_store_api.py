"""The store's facade: everything in __all__ exists, and importing it touches nothing on disk."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import macaron_local.store as store


def test_all_names_exist_and_public_functions_are_documented() -> None:
    assert sorted(store.__all__) == sorted(set(store.__all__))
    for name in store.__all__:
        obj = getattr(store, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__doc__, f"{name} has no docstring"


def test_import_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    modules = ("db", "migrations", "records", "sessions", "turns", "recovery", "exchange")
    code = "; ".join(f"import macaron_local.store.{m}" for m in modules)
    env = {**os.environ, "MACARON_HOME": str(home)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path)
    assert list(home.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
