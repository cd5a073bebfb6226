"""recover(): a clean store needs nothing; orphans written behind the store's back are removed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

from macaron_local.store import (
    NewToolCall,
    NewTurn,
    branch,
    commit_turn,
    create_session,
    get_session,
    open_db,
    recover,
    save_summary,
    search,
)

Counts = Callable[[sqlite_utils.Database], dict[str, int]]


def test_clean_store_needs_no_repair(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = create_session(db).id
    t1 = commit_turn(db, sid, make_turn(), expected_head=None)
    commit_turn(db, sid, make_turn(), expected_head=t1.id)
    save_summary(db, t1.id, label="L0", text="s", n_tokens=1, adapter_revision="r")
    report = recover(db, full_check=True)
    assert report.integrity == "ok" and not report.repaired
    assert report.pending_summaries == 1


def test_orphans_are_removed_and_heads_fixed(
    db_path: Path, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    db = open_db(db_path)
    sid = create_session(db).id
    t1 = commit_turn(db, sid, make_turn("keep"), expected_head=None)
    t2 = commit_turn(db, sid, make_turn("lost parent"), expected_head=t1.id)
    call = NewToolCall(step=0, label="L1", code="c", result="r", status="ok")
    t3 = commit_turn(db, sid, make_turn("child of lost"), [call], expected_head=t2.id)
    save_summary(db, t3.id, label="L0", text="s", n_tokens=1, adapter_revision="r")
    db.close()

    # damage written by something that bypassed the store, with foreign keys off
    raw = sqlite3.connect(db_path)
    raw.execute("DELETE FROM turns WHERE id = ?", [t2.id])
    raw.execute(
        "INSERT INTO summaries VALUES ('ghost', 'L0', 'orphan', 1, 'r', '2026-01-01T00:00:00')"
    )
    raw.execute(
        "INSERT INTO tool_calls VALUES ('c1', 'ghost', 0, 'L1', 'x', 'y', 'ok', '2026-01-01')"
    )
    raw.commit()
    raw.close()

    db = open_db(db_path)
    report = recover(db)
    assert report.removed_turns == 1  # t3, whose parent vanished
    assert report.removed_summaries == 1  # the ghost's (t3's went with t3)
    assert report.removed_tool_calls == 1
    assert report.fixed_heads == 1
    assert get_session(db, sid).head_turn_id == t1.id
    assert [t.request for t in branch(db, sid)] == ["keep"]
    assert counts(db) == {"sessions": 1, "turns": 1, "summaries": 0, "tool_calls": 0}
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    assert not recover(db).repaired


def test_out_of_sync_search_index_is_rebuilt(
    db_path: Path, make_turn: Callable[..., NewTurn]
) -> None:
    db = open_db(db_path)
    sid = create_session(db, "kayak").id
    commit_turn(db, sid, make_turn("paddle length", "220 cm"), expected_head=None)
    db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('delete-all')")
    assert search(db, "paddle") == []

    assert recover(db).rebuilt_fts == ()  # the quick start-up check does not read every turn
    report = recover(db, full_check=True)
    assert report.rebuilt_fts == ("turns_fts",)
    assert [h.session_id for h in search(db, "paddle")] == [sid]
