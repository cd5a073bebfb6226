"""Sessions: list order, rename, soft delete with undo, purge with cascade, search input."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store import (
    NewToolCall,
    NewTurn,
    commit_turn,
    create_session,
    delete_session,
    get_session,
    list_sessions,
    purge_deleted,
    rename_session,
    restore_session,
    save_summary,
    search,
    set_exclude_from_learning,
)
from macaron_local.store.sessions import fts_query

Counts = Callable[[sqlite_utils.Database], dict[str, int]]


def test_create_get_list_rename(db: sqlite_utils.Database) -> None:
    first = create_session(db, "first", profile_id="default")
    second = create_session(db, "second")
    assert [s.id for s in list_sessions(db)] == [second.id, first.id]
    assert first.head_turn_id is None and first.profile_id == "default"
    assert first.exclude_from_learning is False and first.deleted_at is None

    time.sleep(0.002)  # updated_at has microsecond precision; make the rename strictly later
    rename_session(db, first.id, "renamed")
    assert get_session(db, first.id).title == "renamed"
    assert [s.id for s in list_sessions(db)] == [first.id, second.id]
    assert [s.id for s in list_sessions(db, limit=1)] == [first.id]

    set_exclude_from_learning(db, second.id, True)
    assert get_session(db, second.id).exclude_from_learning is True
    with pytest.raises(StoreError, match="no session"):
        rename_session(db, "missing", "x")
    with pytest.raises(StoreError, match="no session"):
        get_session(db, "missing")


def test_delete_and_undo(db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]) -> None:
    session = create_session(db, "holiday ideas")
    commit_turn(db, session.id, make_turn("where to go in April", "Lisbon"), expected_head=None)
    delete_session(db, session.id)
    assert list_sessions(db) == []
    assert get_session(db, session.id).deleted_at is not None
    assert [s.id for s in list_sessions(db, include_deleted=True)] == [session.id]
    assert search(db, "Lisbon") == []

    restore_session(db, session.id)
    assert [s.id for s in list_sessions(db)] == [session.id]
    assert [h.session_id for h in search(db, "Lisbon")] == [session.id]


def test_purge_removes_everything_of_deleted_sessions_only(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    keep = create_session(db, "keep")
    gone = create_session(db, "gone")
    call = NewToolCall(step=0, label="L1", code="now()", result="noon", status="ok")
    head = None
    for i in range(3):
        turn = commit_turn(db, gone.id, make_turn(f"zebra {i}"), [call], expected_head=head)
        save_summary(db, turn.id, label="L0", text="s", n_tokens=1, adapter_revision="r")
        head = turn.id
    commit_turn(db, keep.id, make_turn("zebra kept"), expected_head=None)

    delete_session(db, gone.id)
    assert purge_deleted(db, older_than=timedelta(hours=1)) == 0
    assert counts(db)["turns"] == 4
    assert purge_deleted(db) == 1
    assert counts(db) == {"sessions": 1, "turns": 1, "summaries": 0, "tool_calls": 0}
    restore_gone = pytest.raises(StoreError, match="no session")
    with restore_gone:
        restore_session(db, gone.id)
    assert [h.turn_id is not None for h in search(db, "zebra")] == [True]
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_purge_handles_a_long_branch(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    # deeper than SQLite's trigger recursion limit (1000): parent links must not cascade
    session = create_session(db)
    head = None
    for i in range(1100):
        head = commit_turn(db, session.id, make_turn(f"q{i}"), expected_head=head).id
    delete_session(db, session.id)
    assert purge_deleted(db) == 1
    assert counts(db)["turns"] == 0


AWKWARD = [
    'C++ "foo',
    '"',
    '""',
    "*",
    "foo*",
    "NOT",
    "AND OR NOT",
    "(unbalanced",
    "col:value",
    "NEAR(a b, 3)",
    "-minus",
    "^caret",
    "'single'",
    "back\\slash",
    "semi; DROP TABLE turns; --",
    "émoji 🚀",
    "   ",
    "",
    "a\x00b",
]


@pytest.mark.parametrize("query", AWKWARD)
def test_search_accepts_any_user_text(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], query: str
) -> None:
    session = create_session(db, "C++ templates")
    text = 'In C++ "foo" is a name; NOT a keyword (col:value) NEAR 🚀'
    commit_turn(db, session.id, make_turn(text, "ok"), expected_head=None)
    hits = search(db, query)
    assert all(hit.session_id == session.id for hit in hits)
    assert "turns" in db.table_names()


def test_search_finds_titles_and_turns(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    a = create_session(db, "C++ templates")
    b = create_session(db, "groceries")
    turn = commit_turn(db, b.id, make_turn('is C++ "foo" valid?', "yes"), expected_head=None)

    hits = search(db, 'C++ "foo')
    assert [(h.session_id, h.turn_id) for h in hits] == [(b.id, turn.id)]
    assert "[foo]" in hits[0].snippet

    by_title = search(db, "templates")
    assert [(h.session_id, h.turn_id, h.session_title) for h in by_title] == [
        (a.id, None, "C++ templates")
    ]
    assert [h.turn_id for h in search(db, "vali")] == [turn.id]  # prefix on the last word
    assert search(db, "yes", limit=0) == []


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('C++ "foo') == '"C++" """foo"'
    assert fts_query("expo") == '"expo"*'
    assert fts_query(" \t ") is None
