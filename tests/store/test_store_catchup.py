"""The summary catch-up: a turn it cannot summarize is skipped and reported, not the end of it;
the catch-up at close stops at the profile's ``close_wait_s`` and leaves the rest for later.

Runs the real runtime (embedded model) on a store holding turns no summary was written for, one
under a label the profile lacks (as an old, unvalidated import could leave).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from macaron_local.store import NewTurn, commit_turn, create_session, pending_summaries
from macaron_local.turns.pipeline import Runtime
from tests.conftest import macaron_home
from tests.turns.conftest import write_fast_profile


def _orphan(rt: Runtime, label: str, request: str) -> str:
    """A committed turn with no summary (what a killed run leaves)."""
    db = rt.db()
    sid = create_session(db, request).id
    turn = NewTurn(
        request=request,
        answer="It is a small, quick answer.",
        label=label,
        route_kind="manual",
        adapter_revision="base",
        profile_hash=rt.profile.content_hash,
    )
    return commit_turn(db, sid, turn, expected_head=None).id


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    home = tmp_path_factory.mktemp("catchup-home")
    write_fast_profile(home, "\n[memory]\nclose_wait_s = 0.0\n")
    with macaron_home(home):
        rt = Runtime.open("test-fast", db_path=home / "data" / "macaron.db")
    yield rt
    rt.close()


def test_a_turn_it_cannot_summarize_is_skipped_and_the_others_written(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    bad = _orphan(runtime, "L9", "an imported turn under a label this profile lacks")
    good = _orphan(runtime, "L0", "what is a haiku?")
    skipped = runtime.finish_pending()
    assert len(skipped) == 1 and bad in skipped[0] and "'L9'" in skipped[0]
    assert skipped[0] in caplog.text  # reported in the log as well
    assert pending_summaries(runtime.db()) == [bad]  # the good one got its summary
    assert good not in pending_summaries(runtime.db())


def test_the_catch_up_at_close_stops_at_its_deadline(runtime: Runtime) -> None:
    left = {_orphan(runtime, "L0", f"question {i}") for i in range(3)}
    assert runtime.profile.memory.close_wait_s == 0.0
    assert runtime.finish_pending(timeout=runtime.profile.memory.close_wait_s) == []
    assert left <= set(pending_summaries(runtime.db()))  # left for the next start
    home = runtime.db_path.parent.parent
    with macaron_home(home), Runtime.open("test-fast", db_path=runtime.db_path) as again:
        assert left <= set(pending_summaries(again.db()))
    assert left <= set(pending_summaries(runtime.db()))  # its close wrote none of them
