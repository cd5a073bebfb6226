"""A store writer for the SIGKILL test: starts like the app, then commits turns until killed.

Usage: python crash_writer.py DB_PATH SESSION_ID SEED

At start it runs ``recover`` and finishes pending summaries (what the app does at start), prints
``ready``, then loops: one turn (sometimes a retry, with 0-3 tool calls and a large answer) per
``commit_turn``, then its summary. It prints ``begin N`` / ``done N`` around each commit so the
test can tell where the kill landed. ``meta`` records what a complete turn must hold.
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path

import sqlite_utils

from macaron_local.store import (
    NewToolCall,
    NewTurn,
    commit_turn,
    get_session,
    get_turn,
    open_db,
    pending_summaries,
    recover,
    save_summary,
)


def _summarise(db: sqlite_utils.Database, turn_id: str) -> None:
    turn = get_turn(db, turn_id)
    text = f"summary of turn {turn.meta['seq']}"
    save_summary(db, turn_id, label=turn.label, text=text, n_tokens=5, adapter_revision="r1")


def main(db_path: str, session_id: str, seed: int) -> None:
    db = open_db(Path(db_path))
    recover(db)
    for turn_id in pending_summaries(db):
        _summarise(db, turn_id)
    seq = db.execute("SELECT count(*) FROM turns").fetchone()[0]
    rng = random.Random(seed)
    print("ready", flush=True)
    while True:
        head = get_session(db, session_id).head_turn_id
        parent = head
        if head is not None and rng.random() < 0.25:
            parent = get_turn(db, head).parent_id  # a retry: a sibling of the head
        answer = "".join(rng.choice("abcdefgh ") for _ in range(rng.randint(1, 60_000)))
        calls = [
            NewToolCall(
                step=i,
                label="L1",
                code="x = 1\n" * rng.randint(1, 5000),
                result=f"r{i}",
                status="ok",
            )
            for i in range(rng.randint(0, 3))
        ]
        meta = {
            "seq": seq,
            "n_tool_calls": len(calls),
            "answer_sha": hashlib.sha256(answer.encode()).hexdigest(),
        }
        turn = NewTurn(
            request=f"request {seq}",
            answer=answer,
            label=rng.choice(["L0", "L1"]),
            route_kind="auto",
            adapter_revision="r1",
            profile_hash="h",
            meta=meta,
        )
        print(f"begin {seq}", flush=True)
        record = commit_turn(db, session_id, turn, calls, expected_head=head, parent_id=parent)
        print(f"done {seq}", flush=True)
        seq += 1
        _summarise(db, record.id)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
