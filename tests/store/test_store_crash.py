"""SIGKILL at random points while a real subprocess commits turns: never a partial turn.

Fifty times: start ``crash_writer.py`` on the same database, let it write for a seeded random
while, kill it with SIGKILL, reopen the database and check every invariant of the store.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlite_utils

from macaron_local.store import (
    branch,
    create_session,
    get_session,
    get_turn,
    open_db,
    recover,
    tool_calls,
)

WRITER = Path(__file__).with_name("crash_writer.py")
KILLS = 50


def _run_and_kill(db_path: Path, session_id: str, seed: int, delay: float) -> list[str]:
    proc = subprocess.Popen(
        [sys.executable, "-u", str(WRITER), str(db_path), session_id, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    if first != "ready":
        proc.kill()
        pytest.fail(f"writer did not start: {first!r} {proc.stderr.read() if proc.stderr else ''}")
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    return out.split("\n")


def _check_store(db: sqlite_utils.Database, session_id: str) -> int:
    """Assert every invariant after a crash; return the number of committed turns."""
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    report = recover(db, full_check=True)
    assert not report.repaired, report
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    rows = db.execute("SELECT id FROM turns").fetchall()
    seqs = []
    for (turn_id,) in rows:
        turn = get_turn(db, turn_id)
        assert hashlib.sha256(turn.answer.encode()).hexdigest() == turn.meta["answer_sha"]
        calls = tool_calls(db, turn_id)
        assert [c.step for c in calls] == list(range(turn.meta["n_tool_calls"]))
        assert all(c.status == "ok" and c.result == f"r{c.step}" for c in calls)
        seqs.append(turn.meta["seq"])
    assert sorted(seqs) == list(range(len(rows))), "turns are whole and none is missing"
    for turn_id, text in db.execute("SELECT turn_id, text FROM summaries").fetchall():
        assert text == f"summary of turn {get_turn(db, turn_id).meta['seq']}"
    head = get_session(db, session_id).head_turn_id
    if rows:
        assert head is not None
        path = branch(db, session_id)
        assert path[-1].id == head and path[0].parent_id is None
    else:
        assert head is None
    return len(rows)


@pytest.mark.slow
def test_sigkill_at_random_points_never_leaves_a_partial_turn(tmp_path: Path) -> None:
    db_path = tmp_path / "crash.db"
    setup = open_db(db_path)
    session_id = create_session(setup, "crash test").id
    setup.close()
    rng = random.Random(20260418)
    committed = 0
    mid_commit = 0
    for i in range(KILLS):
        lines = _run_and_kill(db_path, session_id, seed=i, delay=rng.uniform(0.0, 0.4))
        last = [line for line in lines if line.startswith(("begin", "done"))]
        mid_commit += bool(last) and last[-1].startswith("begin")
        db = open_db(db_path)
        count = _check_store(db, session_id)
        db.close()
        assert count >= committed, "committed turns never disappear"
        committed = count
    print(f"{KILLS} kills, {committed} turns committed, {mid_commit} kills inside commit_turn")
    assert committed > 0
