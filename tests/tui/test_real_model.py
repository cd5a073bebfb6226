"""Smoke tests: the app on the REAL embedded model (Assistant over a real Runtime, real SQLite)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from macaron_local.experience import set_user_choice
from macaron_local.facade import NO_EVENTS, Assistant, TurnEvents, TurnItem, TurnRequest
from macaron_local.tui.app import make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.messages import AssistantMessage
from tests.conftest import macaron_home
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.turns.conftest import write_fast_profile

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
LABELS = ("L0 Chat", "L1 Agent", "L2 Coding", "L3 GenUI")


class CountingAssistant(Assistant):
    """The real assistant, counting the streamed pieces of each turn."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pieces: list[str] = []

    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnItem:
        def count(piece: str) -> None:
            self.pieces.append(piece)
            if events.on_text:
                events.on_text(piece)

        return super().run_turn(request, replace(events, on_text=count))


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CountingAssistant]:
    home = tmp_path_factory.mktemp("tui-real")
    write_fast_profile(home)
    with macaron_home(home):
        assistant = CountingAssistant("test-fast", db_path=home / "data" / "macaron.db")
        assistant.start()
        assistant.wait_ready(300)
    assert assistant.ready, assistant.status
    yield assistant
    assistant.close()


def stored_turns(db: Path, session_id: str) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT request, label, answer FROM turns WHERE session_id = ?", [session_id]
        ).fetchall()


class Seen:
    """What the screen showed for the last answer (read before the app closes)."""

    def __init__(self, widget: AssistantMessage) -> None:
        assert widget.item is not None, "the turn failed"
        self.badge_text, self.text, self.item = widget.badge_text, widget.text, widget.item


async def _ask(real: CountingAssistant, text: str) -> tuple[Seen, str]:
    real.pieces.clear()
    set_user_choice(False)  # the first-run explainer is tested in test_learning.py
    app = make_app(Settings(), real)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, text, wait=False)
        await wait_for(pilot, lambda: chat(pilot).job is None, timeout=400)
        await pilot.pause()
        return Seen(app.chat.query(AssistantMessage).last()), chat(pilot).session_id or ""


async def test_routed_answer_streams_with_badge_and_is_stored(real: CountingAssistant) -> None:
    widget, sid = await _ask(real, "hello! how are you today?")
    assert len(real.pieces) > 1  # streamed, not delivered in one piece
    assert widget.badge_text.startswith(LABELS) and (
        "routed" in widget.badge_text or "fallback" in widget.badge_text
    )
    rows = stored_turns(real._db_path, sid)
    assert rows == [("hello! how are you today?", widget.item.label, widget.item.answer)]
    assert widget.item.answer and widget.item.profile_hash


async def test_pinned_answer_on_the_real_model(real: CountingAssistant) -> None:
    widget, sid = await _ask(real, "/code reverse a list in python")
    assert widget.badge_text == "L2 Coding · pinned"
    assert "".join(real.pieces).strip() == widget.item.answer
    assert stored_turns(real._db_path, sid)[0][:2] == ("reverse a list in python", "L2")
    real._rt().finish_pending(timeout=300)  # the summary is written in the background
    history = real.history(sid)
    assert history[0].summary and history[0].summary not in widget.text
