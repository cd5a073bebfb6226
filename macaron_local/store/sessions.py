"""Sessions: create, read, list, rename, soft delete with undo, purge, and full-text search.

Owns: the ``sessions`` rows and searching turns/titles through their FTS5 indexes. Must not:
write turns (``turns.commit_turn`` does) or pass user text to FTS unquoted.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store.db import new_id, now, ts, write_txn
from macaron_local.store.records import SearchHit, SessionRecord


def _session_from_row(row: dict[str, object]) -> SessionRecord:
    data = dict(row)
    data["exclude_from_learning"] = bool(data["exclude_from_learning"])
    return SessionRecord.model_validate(data)


def create_session(
    db: sqlite_utils.Database,
    title: str = "",
    *,
    profile_id: str | None = None,
    exclude_from_learning: bool = False,
    created_at: datetime | None = None,
) -> SessionRecord:
    """Create an empty session (no turns, no head) and return it."""
    moment = ts(created_at or now())
    session_id = new_id()
    with write_txn(db):
        db.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, head_turn_id, profile_id,"
            " exclude_from_learning, deleted_at) VALUES (?, ?, ?, ?, NULL, ?, ?, NULL)",
            [session_id, title, moment, moment, profile_id, int(exclude_from_learning)],
        )
    return get_session(db, session_id)


def get_session(db: sqlite_utils.Database, session_id: str) -> SessionRecord:
    """The session ``session_id`` (deleted ones too; see ``deleted_at``); StoreError if none."""
    rows = list(db.query("SELECT * FROM sessions WHERE id = ?", [session_id]))
    if not rows:
        raise StoreError(f"no session {session_id!r}")
    return _session_from_row(rows[0])


def list_sessions(
    db: sqlite_utils.Database, *, limit: int | None = None, include_deleted: bool = False
) -> list[SessionRecord]:
    """Sessions, most recently active first (``updated_at``), without deleted ones by default."""
    where = "" if include_deleted else "WHERE deleted_at IS NULL"
    sql = f"SELECT * FROM sessions {where} ORDER BY updated_at DESC, id DESC LIMIT ?"
    rows = db.query(sql, [-1 if limit is None else limit])
    return [_session_from_row(row) for row in rows]


def _update(db: sqlite_utils.Database, session_id: str, sql: str, params: list[object]) -> None:
    with write_txn(db):
        cursor = db.execute(f"UPDATE sessions SET {sql} WHERE id = ?", [*params, session_id])
        if cursor.rowcount != 1:
            raise StoreError(f"no session {session_id!r}")


def rename_session(db: sqlite_utils.Database, session_id: str, title: str) -> None:
    """Set a session's title."""
    _update(db, session_id, "title = ?, updated_at = ?", [title, ts(now())])


def set_exclude_from_learning(db: sqlite_utils.Database, session_id: str, value: bool) -> None:
    """Keep (True) or stop keeping this session out of experience and refinement."""
    _update(db, session_id, "exclude_from_learning = ?", [int(value)])


def delete_session(db: sqlite_utils.Database, session_id: str) -> None:
    """Soft delete: hide the session from lists and search; ``restore_session`` undoes it."""
    _update(db, session_id, "deleted_at = COALESCE(deleted_at, ?)", [ts(now())])


def restore_session(db: sqlite_utils.Database, session_id: str) -> None:
    """Undo ``delete_session`` (while the session has not been purged)."""
    _update(db, session_id, "deleted_at = NULL", [])


def purge_deleted(db: sqlite_utils.Database, *, older_than: timedelta | None = None) -> int:
    """Remove soft-deleted sessions for good, with their turns, summaries and tool calls.

    Only sessions deleted more than ``older_than`` ago when given. Returns how many went.
    """
    cutoff = ts(now() - (older_than or timedelta(0)))
    with write_txn(db):
        where = "deleted_at IS NOT NULL AND deleted_at <= ?"
        db.execute(f"UPDATE sessions SET head_turn_id = NULL WHERE {where}", [cutoff])
        return db.execute(f"DELETE FROM sessions WHERE {where}", [cutoff]).rowcount


def fts_query(text: str) -> str | None:
    """Turn user text into a safe FTS5 query: every word a quoted phrase (all must match).

    Quotes, ``*``, ``-``, ``NEAR``, ``AND``/``OR``/``NOT``, parentheses and colons all lose
    their FTS meaning. A last word made of letters/digits also matches as a prefix, so
    search-as-you-type finds "export" from "expo". None when there is nothing to search for.
    """
    text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate matches nothing
    words = text.replace("\x00", " ").split()  # FTS5 reads a query only up to a NUL
    if not words:
        return None
    phrases = ['"' + word.replace('"', '""') + '"' for word in words]
    prefix = "*" if words[-1].isalnum() and len(words[-1]) >= 2 else ""
    return " ".join(phrases) + prefix


def search(db: sqlite_utils.Database, query: str, limit: int = 20) -> list[SearchHit]:
    """Full-text search over session titles and turn requests/answers of live sessions.

    Title matches come first, then turn matches, each by relevance. Any user text is accepted.
    """
    match = fts_query(query)
    if match is None or limit <= 0:
        return []
    titles = db.execute(
        """
        SELECT s.id, s.title, NULL, snippet(sessions_fts, -1, '[', ']', '…', 12)
        FROM sessions_fts JOIN sessions s ON s.rowid = sessions_fts.rowid
        WHERE sessions_fts MATCH ? AND s.deleted_at IS NULL
        ORDER BY sessions_fts.rank LIMIT ?
        """,
        [match, limit],
    ).fetchall()
    turns = db.execute(
        """
        SELECT s.id, s.title, t.id, snippet(turns_fts, -1, '[', ']', '…', 12)
        FROM turns_fts JOIN turns t ON t.rowid = turns_fts.rowid
        JOIN sessions s ON s.id = t.session_id
        WHERE turns_fts MATCH ? AND s.deleted_at IS NULL
        ORDER BY turns_fts.rank LIMIT ?
        """,
        [match, limit],
    ).fetchall()
    hits = [
        SearchHit(session_id=sid, session_title=title, turn_id=tid, snippet=snip or "")
        for sid, title, tid, snip in [*titles, *turns]
    ]
    return hits[:limit]
