"""Committed turns in a real SQLite store, without a model (the recorder only reads records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from macaron_local.store import (
    NewToolCall,
    NewTurn,
    commit_turn,
    create_session,
    get_session,
    open_db,
)


def open_store(tmp_path: Path) -> Any:
    return open_db(tmp_path / "macaron.db")


def commit(
    db: Any,
    session_id: str,
    request: str,
    answer: str,
    *,
    label: str = "L0",
    kind: str = "auto",
    parent: Any = ...,
    calls: tuple[NewToolCall, ...] = (),
) -> Any:
    head = get_session(db, session_id).head_turn_id
    turn = NewTurn(
        request=request,
        answer=answer,
        label=label,
        route_kind=kind,
        adapter_revision="base",
        profile_hash="f" * 64,
    )
    return commit_turn(db, session_id, turn, calls, expected_head=head, parent_id=parent)


def new_session(db: Any, title: str = "chat") -> str:
    return create_session(db, title, profile_id="tall-local").id
