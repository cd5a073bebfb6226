"""Export a session (JSON to rebuild it, Markdown to read it) and import a JSON export.

Owns: the export formats (``FORMAT_VERSION``) and ``import_session``, which validates a whole
document before writing anything (its shape, its links, every label against the serving
profile's, text SQLite can store, no nesting deeper than an export has) and then writes it in one
transaction under fresh ids. Must not: reuse ids from the document (an import never collides
with, or overwrites, what is there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, Literal

import sqlite_utils
from pydantic import BaseModel, ConfigDict, ValidationError

from macaron_local.errors import StoreError
from macaron_local.store.db import new_id, ts, write_txn
from macaron_local.store.records import SessionRecord, SummaryRecord, ToolCallRecord, TurnRecord
from macaron_local.store.sessions import get_session
from macaron_local.store.turns import (
    branch,
    insert_tool_call_row,
    insert_turn_row,
    summaries,
    tool_calls,
    turn_from_row,
)

FORMAT_VERSION = 1
KIND = "macaron-session"


class _Doc(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExportedTurn(_Doc):
    """One turn in an export, with its summary (if written) and tool calls."""

    turn: TurnRecord
    summary: SummaryRecord | None
    tool_calls: list[ToolCallRecord]


class SessionExport(_Doc):
    """The JSON export: everything needed to rebuild the session, all branches included."""

    format_version: int
    kind: Literal["macaron-session"]
    session: SessionRecord
    turns: list[ExportedTurn]


def _all_turns(db: sqlite_utils.Database, session_id: str) -> list[TurnRecord]:
    rows = db.query(
        "SELECT * FROM turns WHERE session_id = ? ORDER BY created_at, id", [session_id]
    )
    return _parents_first([turn_from_row(row) for row in rows])


def _parents_first(turns: list[TurnRecord]) -> list[TurnRecord]:
    """Order turns so each comes after its parent (stable on the given order)."""
    placed: set[str | None] = {None}
    ordered: list[TurnRecord] = []
    waiting = list(turns)
    while waiting:
        ready = [t for t in waiting if t.parent_id in placed]
        if not ready:
            raise StoreError("turns form a cycle or name a parent outside the session")
        for turn in ready:
            placed.add(turn.id)
        ordered.extend(ready)
        waiting = [t for t in waiting if t.id not in placed]
    return ordered


def build_export(db: sqlite_utils.Database, session_id: str) -> SessionExport:
    """The typed export of one session (what ``export_session(..., "json")`` serialises)."""
    session = get_session(db, session_id).model_copy(update={"deleted_at": None})
    turns = _all_turns(db, session_id)
    sums = summaries(db, [t.id for t in turns])
    return SessionExport(
        format_version=FORMAT_VERSION,
        kind=KIND,
        session=session,
        turns=[
            ExportedTurn(turn=t, summary=sums.get(t.id), tool_calls=tool_calls(db, t.id))
            for t in turns
        ],
    )


def export_session(
    db: sqlite_utils.Database, session_id: str, fmt: Literal["markdown", "json"] = "markdown"
) -> str:
    """Export a session: ``json`` (complete, re-importable) or ``markdown`` (current branch)."""
    if fmt == "json":
        return build_export(db, session_id).model_dump_json(indent=2)
    if fmt == "markdown":
        return _markdown(db, session_id)
    raise StoreError(f"unknown export format {fmt!r}", hint="use 'markdown' or 'json'")


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _markdown(db: sqlite_utils.Database, session_id: str) -> str:
    session = get_session(db, session_id)
    lines = [f"# {session.title or 'Untitled session'}", ""]
    lines += [f"_Started {session.created_at:%Y-%m-%d %H:%M} UTC · session `{session.id}`_", ""]
    for turn in branch(db, session_id):
        who = "Tool result" if turn.tool_result_of else "You"
        lines += [f"### {who}", "", turn.request, ""]
        badge = f"`{turn.label}`"
        if turn.route_kind != "auto":
            badge += f" `{turn.route_kind}`"
        if turn.backend == "remote":
            badge += " `remote`"
        lines += [f"### Assistant {badge}", "", turn.answer, ""]
        calls = tool_calls(db, turn.id)
        if calls:
            lines += [f"<details><summary>Tool calls ({len(calls)})</summary>", ""]
            for call in calls:
                lines += [f"Step {call.step} · `{call.status}`", "", _fence(call.code, "python")]
                lines += ["", _fence(call.result), ""]
            lines += ["</details>", ""]
    return "\n".join(lines).rstrip() + "\n"


MAX_DEPTH = 32  # an export nests 6 deep (turns.N.turn.meta...); meta may hold a little more


def _parse(text: str) -> SessionExport:
    if _depth(text) > MAX_DEPTH:
        raise StoreError(f"import: the document nests deeper than {MAX_DEPTH} levels")
    try:
        data: Any = json.loads(text)
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except json.JSONDecodeError as exc:
        raise StoreError(f"import: not JSON ({exc})") from exc
    except UnicodeEncodeError as exc:
        raise StoreError("import: the document holds text that is not valid Unicode") from exc
    if not isinstance(data, dict):
        raise StoreError("import: the document must be a JSON object")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise StoreError(
            f"import: format_version {version!r} is not supported (expected {FORMAT_VERSION})"
        )
    try:
        return SessionExport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise StoreError(f"import: {where}: {first['msg']}") from exc


def _depth(text: str) -> int:
    """How deep the brackets of a JSON text nest (strings skipped), without recursion."""
    deepest = depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        tok = m.group(0)
        if tok in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif tok in "]}":
            depth -= 1
    return deepest


def _check_labels(doc: SessionExport, labels: Collection[str]) -> None:
    """Every label the document names must be one the serving profile has."""
    known = ", ".join(labels)
    for i, entry in enumerate(doc.turns):
        named = {
            f"turns.{i}.turn.label": [entry.turn.label],
            f"turns.{i}.turn.route_probs": list(entry.turn.route_probs),
            f"turns.{i}.summary.label": [entry.summary.label] if entry.summary else [],
            f"turns.{i}.tool_calls": [c.label for c in entry.tool_calls],
        }
        for where, found in named.items():
            bad = [lb for lb in found if lb not in labels]
            if bad:
                raise StoreError(
                    f"import: {where}: label {bad[0]!r} is not one of this profile's ({known})"
                )


def _check_links(doc: SessionExport) -> None:
    ids = [entry.turn.id for entry in doc.turns]
    if len(set(ids)) != len(ids):
        raise StoreError("import: turn ids are not unique")
    seen: set[str] = set()
    for i, entry in enumerate(doc.turns):
        turn = entry.turn
        if turn.parent_id is not None and turn.parent_id not in seen:
            raise StoreError(
                f"import: turns.{i}.parent_id {turn.parent_id!r} is not an earlier turn"
            )
        if turn.tool_result_of is not None and turn.tool_result_of not in ids:
            raise StoreError(
                f"import: turns.{i}.tool_result_of {turn.tool_result_of!r} is not a turn"
            )
        if entry.summary is not None and entry.summary.turn_id != turn.id:
            raise StoreError(f"import: turns.{i}.summary belongs to another turn")
        if any(call.turn_id != turn.id for call in entry.tool_calls):
            raise StoreError(f"import: turns.{i}.tool_calls belong to another turn")
        seen.add(turn.id)
    head = doc.session.head_turn_id
    if head is not None and head not in seen:
        raise StoreError(f"import: session.head_turn_id {head!r} is not a turn of the export")


def import_session(db: sqlite_utils.Database, text: str, *, labels: Collection[str]) -> str:
    """Rebuild a JSON export as a new session under fresh ids; return the new session id.

    The whole document is checked first, its labels against ``labels`` (the serving profile's:
    a turn under a label it lacks would break every later turn of the session); a bad one
    raises StoreError naming the problem and writes nothing.
    """
    doc = _parse(text)
    _check_labels(doc, labels)
    _check_links(doc)
    session_id = new_id()
    remap: dict[str | None, str | None] = {None: None}
    for entry in doc.turns:
        remap[entry.turn.id] = new_id()
    s = doc.session
    with write_txn(db):
        db.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, head_turn_id, profile_id,"
            " exclude_from_learning, deleted_at) VALUES (?, ?, ?, ?, NULL, ?, ?, NULL)",
            [
                session_id,
                s.title,
                ts(s.created_at),
                ts(s.updated_at),
                s.profile_id,
                int(s.exclude_from_learning),
            ],
        )
        for entry in doc.turns:
            _import_turn(db, entry, session_id, remap)
        db.execute(
            "UPDATE sessions SET head_turn_id = ? WHERE id = ?", [remap[s.head_turn_id], session_id]
        )
    return session_id


def _import_turn(
    db: sqlite_utils.Database,
    entry: ExportedTurn,
    session_id: str,
    remap: dict[str | None, str | None],
) -> None:
    turn = entry.turn.model_copy(
        update={
            "id": remap[entry.turn.id],
            "session_id": session_id,
            "parent_id": remap[entry.turn.parent_id],
            "tool_result_of": remap[entry.turn.tool_result_of],
        }
    )
    insert_turn_row(db, turn)
    if entry.summary is not None:
        m = entry.summary
        db.execute(
            "INSERT INTO summaries (turn_id, label, text, n_tokens, adapter_revision, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [turn.id, m.label, m.text, m.n_tokens, m.adapter_revision, ts(m.created_at)],
        )
    for call in entry.tool_calls:
        insert_tool_call_row(db, new_id(), turn.id, call, ts(call.created_at))
