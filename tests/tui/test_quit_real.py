"""Quitting right after a turn on the REAL model: ``close(finish_summaries=False)`` (what the app
does) stops the summary being written instead of waiting for it; the turn is kept, its summary
is pending, and the next run writes it, as after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.store import open_db, pending_summaries, summaries
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnRequest
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

pytestmark = pytest.mark.slow


def test_quitting_after_a_turn_leaves_its_summary_to_the_next_run(tmp_path: Path) -> None:
    write_fast_profile(tmp_path)
    db_path = tmp_path / "data" / "macaron.db"
    with macaron_home(tmp_path):
        rt = Runtime.open("test-fast", db_path=db_path)
        try:
            sid = rt.new_session("quit").id
            turn = rt.run_turn(TurnRequest(sid, "Tell me about the sea.", label="L0")).id
        finally:
            rt.close(finish_summaries=False)  # right away, as the app quits
        db = open_db(db_path)
        assert turn in pending_summaries(db)  # not written, not waited for
        again = Runtime.open("test-fast", db_path=db_path)
        again.close()  # a normal close writes what was left
        assert summaries(open_db(db_path), [turn])[turn].text
