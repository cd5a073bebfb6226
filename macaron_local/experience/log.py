"""The experience log: recording turns and signals, reading, exporting and purging them.

Owns the ``experience`` and ``experience_signals`` tables (created by the store's
``m002_experience``): :func:`record_turn` (the runtime calls it right after a turn commits),
:func:`record_feedback` (thumbs up/down, corrections), the implicit signals derived from the turn
tree (a retry rejects the earlier answer; a manual re-route of the same request corrects the
router's label), checkers attached to a turn, retention, status, export and purge. Everything
passes :mod:`~macaron_local.experience.redact` before it is written. Nothing is written when the
user has not opted in or the session is excluded from learning. Functions take the database;
must not resolve its path, load models or import torch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict

from macaron_local.errors import StoreError
from macaron_local.experience.redact import redact, redact_value
from macaron_local.experience.settings import enabled
from macaron_local.store import get_session, get_turn, set_exclude_from_learning, siblings
from macaron_local.store.db import new_id, now, ts, write_txn

SignalKind = Literal["up", "down", "correction", "retry", "reroute"]
MAX_TOOL_TEXT = 2000


class Signal(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SignalKind
    value: str = ""
    created_at: str


class ExperienceRow(BaseModel):
    """One kept turn (already redacted) with its signals."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    turn_id: str
    session_id: str
    parent_id: str | None
    created_at: str
    request: str
    answer: str
    label: str
    route_kind: str
    adapter_revision: str
    profile_hash: str
    tool_outcomes: list[dict[str, Any]]
    checker: dict[str, Any] | None
    redactions: int
    signals: list[Signal] = []

    def has(self, kind: SignalKind) -> bool:
        return any(s.kind == kind for s in self.signals)

    def last(self, kind: SignalKind) -> str | None:
        found = [s.value for s in self.signals if s.kind == kind]
        return found[-1] if found else None


def _tool_outcomes(calls: Iterable[Any]) -> tuple[list[dict[str, Any]], int]:
    out, hits = [], 0
    for c in calls:
        code, n1 = redact(str(c.code)[:MAX_TOOL_TEXT])
        result, n2 = redact(str(c.result)[:MAX_TOOL_TEXT])
        out.append({"step": c.step, "status": c.status, "code": code, "result": result})
        hits += n1 + n2
    return out, hits


def record_turn(
    db: sqlite_utils.Database,
    profile: Any,
    turn: Any,
    tool_calls: Iterable[Any] = (),
    *,
    checker: dict[str, Any] | None = None,
) -> str | None:
    """Keep a committed turn (a store ``TurnRecord``) if the user opted in; returns its
    experience id, or None when nothing was written (opt-in off, or the chat is excluded)."""
    if not enabled(profile) or get_session(db, turn.session_id).exclude_from_learning:
        return None
    request, n1 = redact(turn.request)
    answer, n2 = redact(turn.answer)
    tools, n3 = _tool_outcomes(tool_calls)
    checker_value, n4 = redact_value(checker) if checker else (None, 0)
    exp_id = new_id()
    with write_txn(db):
        db.execute(
            "INSERT INTO experience (id, turn_id, session_id, parent_id, created_at, request,"
            " answer, label, route_kind, adapter_revision, profile_hash, tool_outcomes, checker,"
            " redactions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                exp_id,
                turn.id,
                turn.session_id,
                turn.parent_id,
                ts(now()),
                request,
                answer,
                turn.label,
                turn.route_kind,
                turn.adapter_revision,
                turn.profile_hash,
                json.dumps(tools),
                json.dumps(checker_value) if checker_value else None,
                n1 + n2 + n3 + n4,
            ],
        )
        _implicit_signals(db, turn)
    _expire(db, profile.experience.retention_days)
    return exp_id


def _implicit_signals(db: sqlite_utils.Database, turn: Any) -> None:
    """A new sibling with the same request: the earlier answer was rejected (retry); if the new
    one was pinned to another label than the router chose, the router was corrected."""
    for sib in siblings(db, turn.id):
        if sib.id == turn.id or sib.request != turn.request:
            continue
        exp = _exp_id(db, sib.id)
        if exp is None:
            continue
        _insert_signal(db, exp, "retry", turn.id)
        if turn.route_kind == "manual" and sib.route_kind in ("auto", "fallback"):
            if sib.label != turn.label:
                _insert_signal(db, exp, "reroute", turn.label)


def _insert_signal(db: sqlite_utils.Database, exp_id: str, kind: str, value: str) -> None:
    db.execute(
        "INSERT INTO experience_signals (id, experience_id, kind, value, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        [new_id(), exp_id, kind, value, ts(now())],
    )


def _exp_id(db: sqlite_utils.Database, turn_id: str) -> str | None:
    row = db.execute("SELECT id FROM experience WHERE turn_id = ?", [turn_id]).fetchone()
    return row[0] if row else None


def record_feedback(
    db: sqlite_utils.Database,
    profile: Any,
    turn_id: str,
    kind: Literal["up", "down", "correction"],
    correction: str | None = None,
) -> tuple[bool, str]:
    """Keep explicit feedback on a turn; (kept, a sentence saying what happened)."""
    get_turn(db, turn_id)  # StoreError for a turn that is not there
    if kind == "correction" and not (correction or "").strip():
        raise StoreError("a correction needs the corrected answer")
    if not enabled(profile):
        return False, "not kept: experience logging is off (turn it on: macaron experience on)"
    exp = _exp_id(db, turn_id)
    if exp is None:
        return False, "not kept: this turn is not in the experience log (excluded or older)"
    value, hits = redact(correction or "") if kind == "correction" else ("", 0)
    with write_txn(db):
        _insert_signal(db, exp, kind, value)
        if hits:
            db.execute(
                "UPDATE experience SET redactions = redactions + ? WHERE id = ?", [hits, exp]
            )
    what = {"up": "thumbs up", "down": "thumbs down", "correction": "your correction"}[kind]
    return True, f"kept {what} locally for learning"


def attach_checker(db: sqlite_utils.Database, turn_id: str, checker: dict[str, Any]) -> bool:
    """Give a kept turn an automatic checker (see ``checkers``); False if it is not kept."""
    value, _ = redact_value(checker)
    with write_txn(db):
        cur = db.execute(
            "UPDATE experience SET checker = ? WHERE turn_id = ?", [json.dumps(value), turn_id]
        )
    return cur.rowcount > 0


def exclude_session(db: sqlite_utils.Database, session_id: str, value: bool = True) -> int:
    """ "Do not learn from this chat": flag the session and delete what was kept from it."""
    set_exclude_from_learning(db, session_id, value)
    if not value:
        return 0
    with write_txn(db):
        return db.execute("DELETE FROM experience WHERE session_id = ?", [session_id]).rowcount


def _expire(db: sqlite_utils.Database, retention_days: int) -> int:
    """Delete rows older than the retention (0: kept until purged)."""
    if retention_days <= 0:
        return 0
    cutoff = ts(now() - timedelta(days=retention_days))
    with write_txn(db):
        return db.execute("DELETE FROM experience WHERE created_at < ?", [cutoff]).rowcount


def rows(db: sqlite_utils.Database, label: str | None = None) -> list[ExperienceRow]:
    """Every kept turn (optionally one label), oldest first, with its signals."""
    where, params = ("WHERE label = ?", [label]) if label else ("", [])
    found = list(db.query(f"SELECT * FROM experience {where} ORDER BY created_at, id", params))
    signals: dict[str, list[Signal]] = {}
    for s in db.query("SELECT * FROM experience_signals ORDER BY created_at, id"):
        signals.setdefault(s["experience_id"], []).append(
            Signal(kind=s["kind"], value=s["value"], created_at=s["created_at"])
        )
    out = []
    for r in found:
        r["tool_outcomes"] = json.loads(r["tool_outcomes"])
        r["checker"] = json.loads(r["checker"]) if r["checker"] else None
        out.append(ExperienceRow(**r, signals=signals.get(r["id"], [])))
    return out


def status(db: sqlite_utils.Database, profile: Any) -> dict[str, Any]:
    """Counts for ``macaron experience status`` and the app's Settings."""
    per_label = dict(db.execute("SELECT label, COUNT(*) FROM experience GROUP BY label").fetchall())
    per_signal = dict(
        db.execute("SELECT kind, COUNT(*) FROM experience_signals GROUP BY kind").fetchall()
    )
    oldest = db.execute("SELECT MIN(created_at) FROM experience").fetchone()[0]
    excluded = db.execute("SELECT COUNT(*) FROM sessions WHERE exclude_from_learning = 1")
    return {
        "opt_in": enabled(profile),
        "retention_days": profile.experience.retention_days,
        "turns": sum(per_label.values()),
        "per_label": per_label,
        "signals": per_signal,
        "redactions": db.execute("SELECT COALESCE(SUM(redactions), 0) FROM experience").fetchone()[
            0
        ],
        "oldest": oldest,
        "excluded_sessions": excluded.fetchone()[0],
    }


def export(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Everything kept, as JSON-ready dicts (what ``macaron experience export`` writes)."""
    return [r.model_dump(mode="json") for r in rows(db)]


def purge(db: sqlite_utils.Database) -> int:
    """Delete every kept turn and signal; returns how many turns were removed."""
    with write_txn(db):
        db.execute("DELETE FROM experience_signals")
        return db.execute("DELETE FROM experience").rowcount
