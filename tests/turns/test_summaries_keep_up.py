"""Summaries keep up with back-to-back turns, on the real runtime.

A committed turn's summary runs at the engine's SUMMARY priority, before the next answer, and
the next view waits for it instead of showing a provisional note after the profile's
``summary_wait_s`` (0.25 s here, as in tall-local): the answer could not start before it anyway.
Before, summaries ran behind answers and nine of ten back-to-back views showed a stand-in.
"""

from __future__ import annotations

from macaron_local.store import get_turn, summaries
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnRequest
from macaron_local.turns.views import summary_note
from tests.turns.conftest import captured_views

SCRIPT = (
    ("L0", "I am planting tulips and daffodils this weekend."),
    ("L2", "Write a Python list of three flowers."),
    ("L0", "Which of them likes shade?"),
    ("L3", "Show me a checklist for the planting day."),
    ("L2", "Now sort that list alphabetically."),
)


def test_back_to_back_views_show_real_summaries(runtime: Runtime) -> None:
    assert runtime.profile.memory.summary_wait_s == 0.25
    s = runtime.new_session("keep up")
    with captured_views(runtime) as views:
        records = [runtime.run_turn(TurnRequest(s.id, text, label=lab)) for lab, text in SCRIPT]
    for record in records:  # no view stood in for a summary
        assert "provisional_summaries" not in get_turn(runtime.db(), record.id).meta
    runtime.finish_pending()
    stored = summaries(runtime.db(), [r.id for r in records])
    for k, view in enumerate(views):  # and each showed the bytes that were saved
        for r in records[:k]:
            if r.label != view.label:
                note = summary_note(
                    runtime.profile, get_turn(runtime.db(), r.id), stored[r.id].text
                )
                assert note in view.messages, (k, r.label)
