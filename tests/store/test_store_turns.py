"""commit_turn (one transaction, head guard), branching and retry, summaries."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlite_utils

from macaron_local.errors import StoreError
from macaron_local.store import (
    NewToolCall,
    NewTurn,
    branch,
    commit_turn,
    create_session,
    delete_session,
    get_session,
    get_turn,
    open_db,
    pending_summaries,
    save_summary,
    set_head,
    siblings,
    summaries,
    tool_calls,
)

Counts = Callable[[sqlite_utils.Database], dict[str, int]]


def _call(step: int, status: str = "ok") -> NewToolCall:
    code = f"x{step} = {step}"
    return NewToolCall(step=step, label="L1", code=code, result=str(step), status=status)


def test_commit_turn_writes_turn_tool_calls_and_head(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    session = create_session(db, "plans")
    turn = make_turn("book a table", "done", label="L1", compacted=True, meta={"why": ["a", 1]})
    record = commit_turn(db, session.id, turn, [_call(0), _call(1)], expected_head=None)

    assert get_session(db, session.id).head_turn_id == record.id
    stored = get_turn(db, record.id)
    assert stored == record
    assert stored.route_probs == turn.route_probs and stored.tokens == turn.tokens
    assert stored.compacted is True and stored.meta == {"why": ["a", 1]}
    assert [(c.step, c.code, c.status) for c in tool_calls(db, record.id)] == [
        (0, "x0 = 0", "ok"),
        (1, "x1 = 1", "ok"),
    ]


def test_stale_expected_head_writes_nothing(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    session = create_session(db)
    first = commit_turn(db, session.id, make_turn("one"), expected_head=None)
    before = counts(db)
    with pytest.raises(StoreError, match="moved on"):
        commit_turn(db, session.id, make_turn("two"), [_call(0)], expected_head=None)
    assert counts(db) == before
    assert get_session(db, session.id).head_turn_id == first.id


def test_a_failing_tool_call_rolls_back_the_whole_turn(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    session = create_session(db)
    first = commit_turn(db, session.id, make_turn("one"), expected_head=None)
    before = counts(db)
    with pytest.raises(StoreError, match="rolled back"):
        # two calls with the same step violate UNIQUE(turn_id, step) after the turn row went in
        commit_turn(db, session.id, make_turn("two"), [_call(0), _call(0)], expected_head=first.id)
    assert counts(db) == before
    assert get_session(db, session.id).head_turn_id == first.id
    assert not db.conn.in_transaction


def test_links_must_stay_inside_the_session(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    a, b = create_session(db), create_session(db)
    in_a = commit_turn(db, a.id, make_turn(), expected_head=None)
    before = counts(db)
    with pytest.raises(StoreError, match="parent"):
        commit_turn(db, b.id, make_turn(), expected_head=None, parent_id=in_a.id)
    with pytest.raises(StoreError, match="tool_result_of"):
        commit_turn(db, b.id, make_turn(tool_result_of=in_a.id), expected_head=None)
    with pytest.raises(StoreError, match="no session"):
        commit_turn(db, "nope", make_turn(), expected_head=None)
    assert counts(db) == before


def test_deleted_session_takes_no_turns(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    session = create_session(db)
    delete_session(db, session.id)
    with pytest.raises(StoreError, match="deleted"):
        commit_turn(db, session.id, make_turn(), expected_head=None)


def test_retry_creates_a_sibling_and_keeps_the_old_branch(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = create_session(db).id
    t1 = commit_turn(db, sid, make_turn("q1", "a1"), expected_head=None)
    t2 = commit_turn(db, sid, make_turn("q2", "a2"), expected_head=t1.id)
    t3 = commit_turn(db, sid, make_turn("q3", "a3"), expected_head=t2.id)
    assert [t.id for t in branch(db, sid)] == [t1.id, t2.id, t3.id]
    assert t2.parent_id == t1.id and t1.parent_id is None

    retry = commit_turn(db, sid, make_turn("q3", "a3 again"), expected_head=t3.id, parent_id=t2.id)
    assert [t.answer for t in branch(db, sid)] == ["a1", "a2", "a3 again"]
    assert [t.answer for t in branch(db, sid, head=t3.id)] == ["a1", "a2", "a3"]
    assert [t.id for t in siblings(db, retry.id)] == [t3.id, retry.id]
    assert [t.id for t in siblings(db, t1.id)] == [t1.id]

    set_head(db, sid, t3.id)
    assert branch(db, sid)[-1].id == t3.id
    # a turn committed now continues the branch the head is on
    t4 = commit_turn(db, sid, make_turn("q4", "a4"), expected_head=t3.id)
    assert [t.request for t in branch(db, sid)] == ["q1", "q2", "q3", "q4"]
    assert t4.parent_id == t3.id


def test_edit_in_the_middle_branches_from_there(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    sid = create_session(db).id
    t1 = commit_turn(db, sid, make_turn("q1"), expected_head=None)
    t2 = commit_turn(db, sid, make_turn("q2"), expected_head=t1.id)
    edit = commit_turn(db, sid, make_turn("q1 edited"), expected_head=t2.id, parent_id=None)
    assert [t.request for t in branch(db, sid)] == ["q1 edited"]
    assert {t.id for t in siblings(db, edit.id)} == {t1.id, edit.id}


def test_set_head_refuses_foreign_turns(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn]
) -> None:
    a, b = create_session(db).id, create_session(db).id
    in_a = commit_turn(db, a, make_turn(), expected_head=None)
    with pytest.raises(StoreError, match="not a turn of session"):
        set_head(db, b, in_a.id)
    with pytest.raises(StoreError, match="not a turn of session"):
        branch(db, b, head=in_a.id)
    assert get_session(db, b).head_turn_id is None
    assert branch(db, b) == []


def test_summaries_only_for_committed_turns_and_idempotent(
    db: sqlite_utils.Database, make_turn: Callable[..., NewTurn], counts: Counts
) -> None:
    sid = create_session(db).id
    t1 = commit_turn(db, sid, make_turn("q1"), expected_head=None)
    t2 = commit_turn(db, sid, make_turn("q2"), expected_head=t1.id)
    assert pending_summaries(db) == [t1.id, t2.id]

    orphan = save_summary(db, "not-a-turn", label="L0", text="x", n_tokens=1, adapter_revision="r")
    assert orphan is None
    assert counts(db)["summaries"] == 0

    kwargs = {"label": "L0", "n_tokens": 7, "adapter_revision": "rev-l0-1"}
    save_summary(db, t1.id, text="user greeted", **kwargs)
    save_summary(db, t1.id, text="user greeted twice", **kwargs)
    assert counts(db)["summaries"] == 1
    assert summaries(db, [t1.id, t2.id])[t1.id].text == "user greeted twice"
    assert pending_summaries(db) == [t2.id]


def test_two_writers_with_the_same_checkpoint_one_wins(
    db_path: Path, make_turn: Callable[..., NewTurn]
) -> None:
    setup = open_db(db_path)
    sid = create_session(setup).id
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def writer(text: str) -> None:
        conn = open_db(db_path)  # one connection per thread
        barrier.wait()
        try:
            commit_turn(conn, sid, make_turn(text), [_call(0)], expected_head=None)
            outcomes.append("ok")
        except StoreError:
            outcomes.append("refused")
        finally:
            conn.close()

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ok", "refused"]
    assert len(branch(setup, sid)) == 1
    assert setup.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 1
