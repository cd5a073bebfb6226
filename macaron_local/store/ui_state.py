"""The state of generated UIs: per turn, the values the user set and the forms they submitted.

Owns reading and writing the ``ui_state`` table (``m003_ui_state``). A row belongs to the turn
that drew the UI and goes with it. Must not: judge what is stored (the facade leaves NoAI values
out before calling), or know about widgets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field

from macaron_local.store.db import now, ts, write_txn
from macaron_local.store.turns import get_turn

MAX_SUBMISSIONS = 50  # per turn: the newest are kept


class UiStateRecord(BaseModel):
    """One generated UI's state: ``values`` by component id, ``submissions`` oldest first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn_id: str
    values: dict[str, Any] = Field(default_factory=dict)
    submissions: list[dict[str, Any]] = Field(default_factory=list)


def save_ui_state(
    db: sqlite_utils.Database,
    turn_id: str,
    values: dict[str, Any],
    submission: dict[str, Any] | None = None,
) -> UiStateRecord:
    """Keep ``values`` for the UI of ``turn_id`` (a committed turn: StoreError otherwise), and
    append ``submission`` when given. Returns what is stored now."""
    with write_txn(db):
        get_turn(db, turn_id)
        found = ui_states(db, [turn_id]).get(turn_id)
        submissions = list(found.submissions) if found else []
        if submission is not None:
            submissions = [*submissions, submission][-MAX_SUBMISSIONS:]
        db.execute(
            "INSERT INTO ui_state (turn_id, vals, submissions, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(turn_id) DO UPDATE SET vals = excluded.vals, "
            "submissions = excluded.submissions, updated_at = excluded.updated_at",
            [turn_id, json.dumps(values), json.dumps(submissions), ts(now())],
        )
    return UiStateRecord(turn_id=turn_id, values=values, submissions=submissions)


def ui_states(db: sqlite_utils.Database, turn_ids: Iterable[str]) -> dict[str, UiStateRecord]:
    """The stored state of each of ``turn_ids`` that has one."""
    ids = list(turn_ids)
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = db.execute(
        f"SELECT turn_id, vals, submissions FROM ui_state WHERE turn_id IN ({marks})", ids
    ).fetchall()
    return {
        tid: UiStateRecord(turn_id=tid, values=json.loads(v), submissions=json.loads(s))
        for tid, v, s in rows
    }
