"""Fixtures for the store tests: a real SQLite file per test and a turn factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from macaron_local.store import NewTurn, open_db


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "macaron.db"


@pytest.fixture
def db(db_path: Path) -> Iterator[sqlite_utils.Database]:
    database = open_db(db_path)
    yield database
    database.close()


@pytest.fixture
def make_turn() -> Callable[..., NewTurn]:
    """Build a NewTurn; keyword arguments override the defaults."""

    def build(request: str = "hello", answer: str = "hi", **fields: Any) -> NewTurn:
        base: dict[str, Any] = {
            "label": "L0",
            "route_kind": "auto",
            "route_probs": {"L0": 0.9, "L1": 0.05, "L2": 0.03, "L3": 0.02},
            "adapter_revision": "rev-l0-1",
            "profile_hash": "sha256:abc",
            "timings": {"route_ms": 12.5, "answer_ms": 340.0, "ttft_ms": 80.0},
            "tokens": {"prompt": 120, "cached": 100, "completion": 15, "route": 3},
        }
        base.update(fields)
        return NewTurn(request=request, answer=answer, **base)

    return build


@pytest.fixture
def counts() -> Callable[[sqlite_utils.Database], dict[str, int]]:
    """Row counts of the data tables, to prove that a failed write wrote nothing."""

    def take(database: sqlite_utils.Database) -> dict[str, int]:
        tables = ("sessions", "turns", "summaries", "tool_calls")
        return {t: database.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}

    return take
