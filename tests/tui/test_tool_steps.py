"""Pilot tests of an agent answer's tool steps: folded in the chat and the inspector, from the
turn's record, for a new turn and for history; Enter and a click unfold a step."""

from __future__ import annotations

import pytest
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.toolsteps import ToolSteps, call_text, step_title
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


def steps_of(widget: AssistantMessage | Inspector) -> list[Collapsible]:
    return list(widget.query_one(ToolSteps).query(Collapsible))


def titles(steps: list[Collapsible]) -> list[str]:
    return [str(s.query_one(CollapsibleTitle).label) for s in steps]


def shown(step: Collapsible) -> str:
    return " ".join(str(s.content) for s in step.query(Static) if s.display and s.region.height)


async def test_an_agent_answer_shows_its_steps_folded(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "remind me at 5pm to call mom")
        [widget] = list(app.chat.query(AssistantMessage))
        assert "1 tool call failed" in widget.badge_text
        heading = widget.query_one(".steps-heading", Static)
        assert str(heading.content) == "2 tool steps · 1 failed"
        steps = steps_of(widget)
        assert titles(steps) == [
            '✗ step 1 · error · reminders.search("mom")',
            '✓ step 2 · ok · r = reminders.add("call mom", "2026-01-01T17:00") … (+1 lines)',
        ]
        assert all(s.collapsed for s in steps)
        assert "AttributeError" not in shown(steps[0])  # folded: the error is not on screen
        steps[0].query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: not steps[0].collapsed)
        await pilot.pause()
        assert "has no attribute 'search'" in shown(steps[0])
        await pilot.click(steps[1].query_one(CollapsibleTitle))
        await wait_for(pilot, lambda: not steps[1].collapsed)
        await pilot.pause()
        assert 'print(r["id"], r["due"])' in shown(steps[1])  # the whole block, unfolded
        assert "1 2026-01-01T17:00" in shown(steps[1])


async def test_a_chat_answer_has_no_steps(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello there")
        [widget] = list(app.chat.query(AssistantMessage))
        assert not steps_of(widget) and widget.query_one(ToolSteps).has_class("-empty")


async def test_history_and_the_inspector_show_the_steps(scripted: ScriptedAssistant) -> None:
    first = make_app(Settings(), scripted)
    async with first.run_test(size=SIZE) as pilot:
        await send(pilot, "remind me to water the plants")
        sid = chat(pilot).session_id
    again = make_app(Settings(show_inspector=True), scripted)  # a restart: the steps are history
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await again.chat.open_session(sid)
        await pilot.pause()
        [widget] = list(again.chat.query(AssistantMessage))
        assert len(steps_of(widget)) == 2 and all(s.collapsed for s in steps_of(widget))
        widget.focus()
        inspector = again.chat.query_one(Inspector)
        await wait_for(pilot, lambda: len(steps_of(inspector)) == 2)
        body = str(inspector.query_one("#inspector-body", Static).content)
        assert "Tool calls 2, 1 failed" in body
        assert titles(steps_of(inspector)) == titles(steps_of(widget))
        await send(pilot, "hello")  # a turn without tools: the inspector's steps go away
        list(again.chat.query(AssistantMessage))[-1].focus()
        await wait_for(pilot, lambda: not steps_of(inspector))


def test_a_call_block_reads_as_a_call() -> None:
    body = '{"tool": "todos.add", "args": {"text": "buy oat milk", "due": null}}'
    assert call_text(body) == "todos.add(text='buy oat milk', due=None)"
    assert call_text("x = 1\nprint(x)") == "x = 1\nprint(x)"
    assert call_text("{not json") == "{not json"

    class Call:
        step, code, status = 0, "y" * 200, "timeout"
        result = ""

    title = step_title(Call())
    assert title.startswith("⌛ step 1 · timeout · yyy") and title.endswith("…")
