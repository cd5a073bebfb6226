"""Turns, their tool calls and summaries, and the branch structure of a session.

Owns: the one way a turn is written (``commit_turn``: turn + tool calls + head move in one
transaction, guarded by the head checkpoint), summaries (only for committed turns), and reading
branches. Must not: write half a turn, ever; know anything about models or prompts.

A session's turns form a tree through ``parent_id``; the conversation shown is the path from the
root to ``sessions.head_turn_id``. Retry and edit-last commit a sibling (same parent) and move the
head; the old branch stays.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from types import EllipsisType
from typing import Any

import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store.db import new_id, now, ts, write_txn
from macaron_local.store.records import (
    NewToolCall,
    NewTurn,
    SummaryRecord,
    ToolCallRecord,
    TurnRecord,
)

_JSON_FIELDS = ("route_probs", "timings", "tokens", "meta")


def turn_from_row(row: dict[str, Any], calls: Sequence[ToolCallRecord] = ()) -> TurnRecord:
    """Build a record from a ``turns`` row (JSON columns parsed, flags as bools)."""
    data = dict(row)
    for field in _JSON_FIELDS:
        data[field] = json.loads(data[field])
    data["compacted"] = bool(data["compacted"])
    data["tool_calls"] = tuple(calls)
    return TurnRecord.model_validate(data)


def _rows(db: sqlite_utils.Database, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    return list(db.query(sql, params))


def get_turn(db: sqlite_utils.Database, turn_id: str) -> TurnRecord:
    """The committed turn ``turn_id``; StoreError if there is none."""
    rows = _rows(db, "SELECT * FROM turns WHERE id = ?", [turn_id])
    if not rows:
        raise StoreError(f"no turn {turn_id!r}")
    return turn_from_row(rows[0], tool_calls(db, turn_id))


def _session_head(db: sqlite_utils.Database, session_id: str) -> str | None:
    row = db.execute(
        "SELECT head_turn_id, deleted_at FROM sessions WHERE id = ?", [session_id]
    ).fetchone()
    if row is None:
        raise StoreError(f"no session {session_id!r}")
    if row[1] is not None:
        raise StoreError(f"session {session_id!r} is deleted", hint="restore it first")
    head: str | None = row[0]
    return head


def _check_in_session(
    db: sqlite_utils.Database, session_id: str, turn_id: str | None, what: str
) -> None:
    if turn_id is None:
        return
    row = db.execute("SELECT session_id FROM turns WHERE id = ?", [turn_id]).fetchone()
    if row is None or row[0] != session_id:
        raise StoreError(f"{what} {turn_id!r} is not a turn of session {session_id!r}")


def commit_turn(
    db: sqlite_utils.Database,
    session_id: str,
    turn: NewTurn,
    tool_calls: Iterable[NewToolCall] = (),
    *,
    expected_head: str | None,
    parent_id: str | None | EllipsisType = ...,
) -> TurnRecord:
    """Write a finished turn, its tool calls and the new head in ONE transaction.

    ``expected_head`` is the session's head as checkpointed before the turn started; if the head
    moved since (another writer, a retry elsewhere), nothing is written and StoreError is raised.
    ``parent_id`` defaults to ``expected_head`` (a normal next turn); pass the head's parent for
    a retry / edit-last (a sibling). Any failure rolls the whole turn back.
    """
    parent = expected_head if parent_id is ... else parent_id
    turn_id, created = new_id(), now()
    calls = tuple(
        ToolCallRecord(**call.model_dump(), id=new_id(), turn_id=turn_id, created_at=created)
        for call in tool_calls
    )
    record = TurnRecord(
        **turn.model_dump(),
        id=turn_id,
        session_id=session_id,
        parent_id=parent,
        created_at=created,
        tool_calls=calls,
    )
    with write_txn(db):
        head = _session_head(db, session_id)
        if head != expected_head:
            raise StoreError(
                f"session {session_id!r} moved on: head is {head!r}, expected {expected_head!r}",
                hint="the turn was not saved; reload the session and try again",
            )
        _check_in_session(db, session_id, parent, "parent")
        _check_in_session(db, session_id, turn.tool_result_of, "tool_result_of")
        insert_turn_row(db, record)
        for call in calls:
            insert_tool_call_row(db, call.id, record.id, call, ts(record.created_at))
        db.execute(
            "UPDATE sessions SET head_turn_id = ?, updated_at = ? WHERE id = ?",
            [record.id, ts(record.created_at), session_id],
        )
    return record


def insert_turn_row(db: sqlite_utils.Database, record: TurnRecord) -> None:
    """INSERT one turn row (inside the caller's transaction; no checks)."""
    data = record.model_dump(mode="json")  # meta may hold datetimes and the like
    for field in _JSON_FIELDS:
        data[field] = json.dumps(data[field], ensure_ascii=False)
    data["compacted"] = int(data["compacted"])
    data["created_at"] = ts(record.created_at)
    columns = ", ".join(data)
    marks = ", ".join("?" for _ in data)
    db.execute(f"INSERT INTO turns ({columns}) VALUES ({marks})", list(data.values()))


def insert_tool_call_row(
    db: sqlite_utils.Database, call_id: str, turn_id: str, call: NewToolCall, created_at: str
) -> None:
    """INSERT one tool call row (inside the caller's transaction; no checks)."""
    db.execute(
        "INSERT INTO tool_calls (id, turn_id, step, label, code, result, status, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [call_id, turn_id, call.step, call.label, call.code, call.result, call.status, created_at],
    )


def tool_calls(db: sqlite_utils.Database, turn_id: str) -> list[ToolCallRecord]:
    """The tool calls of one turn, in step order."""
    rows = _rows(db, "SELECT * FROM tool_calls WHERE turn_id = ? ORDER BY step", [turn_id])
    return [ToolCallRecord.model_validate(row) for row in rows]


def _calls_of(db: sqlite_utils.Database, turn_ids: list[str]) -> dict[str, list[ToolCallRecord]]:
    """The tool calls of many turns in one query, by turn, in step order."""
    out: dict[str, list[ToolCallRecord]] = {}
    for start in range(0, len(turn_ids), 500):  # SQLite's bound-parameter limit
        part = turn_ids[start : start + 500]
        marks = ", ".join("?" for _ in part)
        sql = f"SELECT * FROM tool_calls WHERE turn_id IN ({marks}) ORDER BY turn_id, step"
        for row in _rows(db, sql, part):
            out.setdefault(row["turn_id"], []).append(ToolCallRecord.model_validate(row))
    return out


def branch(db: sqlite_utils.Database, session_id: str, head: str | None = None) -> list[TurnRecord]:
    """The turns from the root to ``head`` (default: the session's head), root first."""
    if head is None:
        row = db.execute("SELECT head_turn_id FROM sessions WHERE id = ?", [session_id]).fetchone()
        if row is None:
            raise StoreError(f"no session {session_id!r}")
        head = row[0]
        if head is None:
            return []
    _check_in_session(db, session_id, head, "head")
    rows = _rows(
        db,
        """
        WITH RECURSIVE chain(id, depth) AS (
            SELECT ?, 0
            UNION ALL
            SELECT t.parent_id, chain.depth + 1 FROM turns t JOIN chain ON t.id = chain.id
            WHERE t.parent_id IS NOT NULL
        )
        SELECT turns.* FROM chain JOIN turns ON turns.id = chain.id ORDER BY chain.depth DESC
        """,
        [head],
    )
    calls = _calls_of(db, [row["id"] for row in rows])
    return [turn_from_row(row, calls.get(row["id"], ())) for row in rows]


def siblings(db: sqlite_utils.Database, turn_id: str) -> list[TurnRecord]:
    """All turns sharing ``turn_id``'s parent (itself included), oldest first."""
    turn = get_turn(db, turn_id)
    rows = _rows(
        db,
        "SELECT * FROM turns WHERE session_id = ? AND parent_id IS ? ORDER BY created_at, id",
        [turn.session_id, turn.parent_id],
    )
    return [turn_from_row(row) for row in rows]


def newest_tip(db: sqlite_utils.Database, turn_id: str) -> str:
    """The end of the branch through ``turn_id``: its newest child, that one's newest child...
    (``turn_id`` itself when nothing follows it). Switching to a branch moves the head here."""
    at = turn_id
    while True:
        row = db.execute(
            "SELECT id FROM turns WHERE parent_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            [at],
        ).fetchone()
        if row is None:
            return at
        at = row[0]


def set_head(db: sqlite_utils.Database, session_id: str, turn_id: str | None) -> None:
    """Make ``turn_id`` (a turn of this session, or None for empty) the session's head."""
    with write_txn(db):
        _session_head(db, session_id)
        _check_in_session(db, session_id, turn_id, "head")
        db.execute(
            "UPDATE sessions SET head_turn_id = ?, updated_at = ? WHERE id = ?",
            [turn_id, ts(now()), session_id],
        )


def save_summary(
    db: sqlite_utils.Database,
    turn_id: str,
    *,
    label: str,
    text: str,
    n_tokens: int,
    adapter_revision: str,
) -> SummaryRecord | None:
    """Store the summary of a committed turn; None (nothing written) if the turn is gone.

    Idempotent: saving again replaces the previous summary of that turn.
    """
    record = SummaryRecord(
        turn_id=turn_id,
        label=label,
        text=text,
        n_tokens=n_tokens,
        adapter_revision=adapter_revision,
        created_at=now(),
    )
    with write_txn(db):
        if db.execute("SELECT 1 FROM turns WHERE id = ?", [turn_id]).fetchone() is None:
            return None
        db.execute(
            "INSERT INTO summaries (turn_id, label, text, n_tokens, adapter_revision, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO UPDATE SET label = excluded.label,"
            " text = excluded.text, n_tokens = excluded.n_tokens,"
            " adapter_revision = excluded.adapter_revision, created_at = excluded.created_at",
            [turn_id, label, text, n_tokens, adapter_revision, ts(record.created_at)],
        )
    return record


def summaries(db: sqlite_utils.Database, turn_ids: Iterable[str]) -> dict[str, SummaryRecord]:
    """The summaries that exist for ``turn_ids``, by turn id (missing ones are absent)."""
    ids = list(turn_ids)
    found: dict[str, SummaryRecord] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for row in db.query(f"SELECT * FROM summaries WHERE turn_id IN ({marks})", chunk):
            found[row["turn_id"]] = SummaryRecord.model_validate(row)
    return found


def pending_summaries(db: sqlite_utils.Database) -> list[str]:
    """Committed turns of live (not deleted) sessions that have no summary yet, oldest first."""
    rows = db.execute(
        """
        SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id
        LEFT JOIN summaries m ON m.turn_id = t.id
        WHERE m.turn_id IS NULL AND s.deleted_at IS NULL
        ORDER BY t.created_at, t.id
        """
    ).fetchall()
    return [turn_id for (turn_id,) in rows]
