"""Start-up recovery: check the file, remove anything orphaned, resync search, count pending work.

Owns: ``recover``. With foreign keys on and every turn written by ``commit_turn`` there should be
nothing to repair; this is the safety net for files written by older code, by hand, or with
foreign keys off. Must not: invent data (a head with no turn falls back to the session's newest
turn, never to a made-up one) or run on a file that fails the integrity check.
"""

from __future__ import annotations

import sqlite3

import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store.db import write_txn
from macaron_local.store.records import RecoveryReport
from macaron_local.store.turns import pending_summaries

_FTS_TABLES = ("turns_fts", "sessions_fts")


def _check_integrity(db: sqlite_utils.Database, full: bool) -> str:
    pragma = "integrity_check" if full else "quick_check"
    problems = [row[0] for row in db.execute(f"PRAGMA {pragma}").fetchall()]
    if problems != ["ok"]:
        raise StoreError(
            f"the store failed {pragma}: {'; '.join(problems[:5])}",
            hint="restore a backup, or move the file aside to start a fresh store",
        )
    return "ok"


def _delete_orphan_turns(db: sqlite_utils.Database) -> int:
    """Turns whose session or parent is gone, repeated so whole orphaned subtrees go."""
    removed = 0
    while True:
        count = db.execute(
            """
            DELETE FROM turns WHERE session_id NOT IN (SELECT id FROM sessions)
               OR (parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM turns))
               OR (parent_id IS NOT NULL AND session_id
                   <> (SELECT p.session_id FROM turns p WHERE p.id = turns.parent_id))
            """
        ).rowcount
        if count == 0:
            return removed
        removed += count


def _fix_heads(db: sqlite_utils.Database, had_head: set[str]) -> int:
    """Heads that name no turn of their own session move to that session's newest turn.

    ``had_head`` are the sessions that had a head before orphans went: deleting a head turn
    nulls the column (ON DELETE SET NULL), and those heads must move too.
    """
    fixed = 0
    for (session_id,) in db.execute(
        "SELECT id FROM sessions WHERE head_turn_id IS NULL OR head_turn_id NOT IN ("
        " SELECT t.id FROM turns t WHERE t.session_id = sessions.id)"
    ).fetchall():
        row = db.execute("SELECT head_turn_id FROM sessions WHERE id = ?", [session_id]).fetchone()
        if row[0] is None and session_id not in had_head:
            continue
        newest = db.execute(
            "SELECT id FROM turns WHERE session_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            [session_id],
        ).fetchone()
        db.execute(
            "UPDATE sessions SET head_turn_id = ? WHERE id = ?",
            [newest[0] if newest else None, session_id],
        )
        fixed += 1
    return fixed


def _resync_fts(db: sqlite_utils.Database, against_content: bool) -> tuple[str, ...]:
    """Check each FTS index and rebuild the broken ones.

    ``against_content`` (rank = 1) also compares the index with the rows it indexes, which reads
    every turn: done by the full check only (after VACUUM, which may renumber rowids, or after
    editing the file by hand).
    """
    rebuilt = []
    rank = ", 1" if against_content else ", 0"
    for table in _FTS_TABLES:
        try:
            db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check'{rank})")
        except sqlite3.DatabaseError:
            db.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
            rebuilt.append(table)
    return tuple(rebuilt)


def recover(db: sqlite_utils.Database, *, full_check: bool = False) -> RecoveryReport:
    """Run at start, before any turn: integrity check, orphan removal, FTS resync.

    ``full_check`` uses ``PRAGMA integrity_check`` instead of the faster ``quick_check`` and
    compares the search indexes with the turns and titles they index.
    Raises StoreError if the file is damaged; otherwise reports what it changed (usually
    nothing) and how many committed turns still wait for a summary.
    """
    integrity = _check_integrity(db, full_check)
    with write_txn(db):
        # checked again at COMMIT: a parent and its orphaned children go in separate statements
        db.execute("PRAGMA defer_foreign_keys = ON")
        had_head = {
            sid
            for (sid,) in db.execute(
                "SELECT id FROM sessions WHERE head_turn_id IS NOT NULL"
            ).fetchall()
        }
        turns = _delete_orphan_turns(db)
        summaries = db.execute(
            "DELETE FROM summaries WHERE turn_id NOT IN (SELECT id FROM turns)"
        ).rowcount
        calls = db.execute(
            "DELETE FROM tool_calls WHERE turn_id NOT IN (SELECT id FROM turns)"
        ).rowcount
        refs = db.execute(
            "UPDATE turns SET tool_result_of = NULL WHERE tool_result_of IS NOT NULL"
            " AND tool_result_of NOT IN (SELECT id FROM turns)"
        ).rowcount
        heads = _fix_heads(db, had_head)
        rebuilt = _resync_fts(db, against_content=full_check)
        leftover = db.execute("PRAGMA foreign_key_check").fetchall()
        if leftover:
            raise StoreError(f"recovery left foreign key problems: {leftover[:5]}")
    return RecoveryReport(
        integrity=integrity,
        removed_turns=turns,
        removed_summaries=summaries,
        removed_tool_calls=calls,
        cleared_tool_result_refs=refs,
        fixed_heads=heads,
        rebuilt_fts=rebuilt,
        pending_summaries=len(pending_summaries(db)),
    )
