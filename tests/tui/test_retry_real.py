"""Retry on the REAL model: a fresh sampling seed each time (recorded in the turn), the pin kept,
and branch switching stored (a new Assistant over the same database sees the choice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.facade import Assistant
from macaron_local.turns.turn import TurnRequest
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile

pytestmark = pytest.mark.slow
HOT = "\n[sampling.overrides.L0]\ntemperature = 1.0\n"  # the seed matters only above 0


def test_retry_draws_a_fresh_seed_keeps_the_pin_and_branches_are_kept(tmp_path: Path) -> None:
    write_fast_profile(tmp_path, extra=HOT)
    db = tmp_path / "data" / "macaron.db"
    with macaron_home(tmp_path):
        a = Assistant("test-fast", db_path=db)
        try:
            assert a.wait_ready(300), a.status
            sid = a.create_session("seeds").id
            first = a.run_turn(TurnRequest(sid, "Write one sentence about the sea.", label="L0"))
            retries = [a.retry(sid) for _ in range(2)]
            again = a.run_turn(
                TurnRequest(
                    sid,
                    first.request,
                    label="L0",
                    parent_id=first.parent_id,
                    seed=int(retries[0].meta["seed"]),
                )
            )
        finally:
            a.close()
        turns = [first, *retries]
        assert first.meta["seed"] == 0  # the profile's (no seed set: the engine default)
        seeds = {t.meta["seed"] for t in turns}
        assert len(seeds) == 3  # each retry drew its own
        assert all((t.label, t.route_kind) == ("L0", "manual") for t in retries)  # pin kept
        assert again.answer == retries[0].answer  # the recorded seed reproduces the answer
        assert len({t.answer for t in turns}) > 1
        assert (again.branch, again.branches) == (4, 4)
        b = Assistant("test-fast", db_path=db)  # the store alone: no model needed
        assert b.switch_branch(sid, again.id, -3) == first.id
        assert [t.id for t in b.history(sid)] == [first.id]
        assert b.switch_branch(sid, first.id, -1) is None
        assert [t.id for t in Assistant("test-fast", db_path=db).history(sid)] == [first.id]
