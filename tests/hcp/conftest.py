"""Fixtures for the HCP tests: writing profile files and a real, migrated store."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
import tomli_w

from macaron_local.hcp import bundled_dir, user_dir


@pytest.fixture
def bundled_doc() -> Callable[..., dict[str, Any]]:
    """The raw TOML document of a bundled profile (a fresh copy per call)."""

    def read(name: str = "tall-local") -> dict[str, Any]:
        return tomllib.loads((bundled_dir() / f"{name}.toml").read_text(encoding="utf-8"))

    return read


@pytest.fixture
def write_user() -> Callable[[str, dict[str, Any] | str], Path]:
    """Write a profile into the user's profile folder (under the test's MACARON_HOME)."""

    def write(name: str, doc: dict[str, Any] | str) -> Path:
        folder = user_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.toml"
        text = doc if isinstance(doc, str) else tomli_w.dumps(doc)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[[str, dict[str, Any] | str], Path]:
    """Write a profile file anywhere (loaded by path)."""

    def write(name: str, doc: dict[str, Any] | str) -> Path:
        path = tmp_path / name
        text = doc if isinstance(doc, str) else tomli_w.dumps(doc)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite_utils.Database]:
    """A real store file, migrated by the store's own open_db (creates hcp_approvals)."""
    from macaron_local.store.db import open_db

    database = open_db(tmp_path / "store.db")
    yield database
    database.close()
