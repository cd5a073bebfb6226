"""Retries keep a one-turn pin; branches are browsed with [ and ] and the choice is kept."""

from __future__ import annotations

import pytest

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.messages import AssistantMessage
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


def last_answer(app: MacaronApp) -> AssistantMessage:
    return app.chat.query(AssistantMessage).last()


async def test_retry_keeps_a_one_turn_pin(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/code hello")
        assert chat(pilot).pin is None  # a one-turn pin: the next turn is routed again
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: chat(pilot).job is None and last_answer(app).item)
        await pilot.pause()
        assert last_answer(app).badge_text.startswith("L2 Coding · pinned · branch 2/2")


async def test_branches_are_browsed_and_the_choice_is_kept(
    app: MacaronApp, scripted: ScriptedAssistant, notes: list[str]
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "tell me a joke")
        await send(pilot, "/retry")
        first, second = scripted.sessions[chat(pilot).session_id or ""].turns
        last_answer(app).focus()
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: last_answer(app).item.id == first.id)  # type: ignore[union-attr]
        assert "branch 1/2" in last_answer(app).badge_text
        assert app.focused is last_answer(app)
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: any("no earlier branch" in n for n in notes))
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: last_answer(app).item.id == second.id)  # type: ignore[union-attr]
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: last_answer(app).item.id == first.id)  # type: ignore[union-attr]
        sid = chat(pilot).session_id
    again = make_app(Settings(), scripted)  # a restart over the same store: still branch 1
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await again.chat.open_session(sid)
        await pilot.pause()
        assert last_answer(again).item.id == first.id  # type: ignore[union-attr]
        await send(pilot, "and another")  # the next message continues the chosen branch
        turns = scripted.history(sid or "")
        assert [t.id for t in turns][:1] == [first.id] and len(turns) == 2
