"""Pilot tests of the chat: streaming, badges, cancel, retry/edit, slash pins, input, copy."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Markdown, Static

from macaron_local.errors import ContractError
from macaron_local.tui.app import MacaronApp
from macaron_local.tui.screens.chat import CANCELLED
from macaron_local.tui.widgets.messages import AssistantMessage, Note, UserMessage
from macaron_local.tui.widgets.prompt import PromptInput
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio  # anyio's pytest plugin ships with anyio (an httpx dependency)


def answers(app: MacaronApp) -> list[AssistantMessage]:
    return list(app.chat.query(AssistantMessage))


async def test_chat_shows_before_the_model_is_ready(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted._ready = False
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert scripted.started
        status = app.chat.query_one("#status", Static)
        await wait_for(pilot, lambda: "loading" in str(status.content))
        await send(pilot, "hello", wait=False)  # typing works; the turn waits for the model
        await wait_for(pilot, lambda: chat(pilot).job is not None)
        await pilot.pause(0.1)
        assert not answers(app)[0].text and answers(app)[0].item is None
        scripted.make_ready()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await wait_for(pilot, lambda: "ready" in str(status.content))
        assert answers(app)[0].item is not None


async def test_answer_streams_then_gets_its_badge(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write code to reverse a list", wait=False)
        await wait_for(pilot, lambda: answers(app) and answers(app)[0].text.count(" ") >= 2)
        widget = answers(app)[0]
        assert widget.item is None  # still streaming, nothing committed
        assert "L2 Coding · routed" in widget.badge_text and "answering" in widget.badge_text
        scripted.hold.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert widget.badge_text == "L2 Coding · routed"
        assert widget.item is not None and widget.item.id.startswith("t")
        markdown = widget.query_one(Markdown)
        assert "def reverse" in markdown.source
        assert list(markdown.query("MarkdownFence"))  # a highlighted code block


async def test_copy_puts_the_code_block_on_the_clipboard(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "some code please")
        await pilot.press("f5")
        assert app.clipboard == "def reverse(items):\n    return items[::-1]"
        await send(pilot, "no fences here")
        await pilot.press("f5")
        assert app.clipboard.startswith("You said:")


async def test_escape_cancels_and_nothing_is_kept(app: MacaronApp, notes: list[str]) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first question")
        scripted.hold = threading.Event()
        await send(pilot, "second question", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        await pilot.press("escape")
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        sid = chat(pilot).session_id
        assert sid is not None
        assert [t.request for t in scripted.history(sid)] == ["first question"]
        assert [str(n.content) for n in app.chat.query(Note)] == [CANCELLED]
        assert [u.text for u in app.chat.query(UserMessage)] == ["first question"]
        assert app.chat.query_one(PromptInput).text == "second question"  # given back
        assert any("rolled back" in n for n in notes)


async def test_retry_and_edit_make_branches_and_keep_the_old(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "tell me a joke")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        sid = chat(pilot).session_id or ""
        assert len(answers(app)) == 1
        assert "branch 2/2 " in answers(app)[0].badge_text
        first, second = scripted.sessions[sid].turns
        assert first.parent_id == second.parent_id is None
        await pilot.press("ctrl+o")
        prompt = app.chat.query_one(PromptInput)
        assert prompt.text == "tell me a joke" and chat(pilot).editing
        prompt.load_text("tell me a riddle")
        await pilot.press("enter")
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert [u.text for u in app.chat.query(UserMessage)] == ["tell me a riddle"]
        assert "branch 3/3 " in answers(app)[0].badge_text
        assert len(scripted.sessions[sid].turns) == 3  # the old branches are kept


async def test_slash_commands_pin_the_specialist(app: MacaronApp, notes: list[str]) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/code hello")
        assert answers(app)[-1].badge_text == "L2 Coding · pinned"
        await send(pilot, "/agent")
        assert chat(pilot).pin == "L1"
        await send(pilot, "hello again")
        assert answers(app)[-1].badge_text == "L1 Agent · pinned"
        await send(pilot, "/auto")
        await send(pilot, "and again")
        assert answers(app)[-1].badge_text == "L0 Chat · routed"
        await send(pilot, "/nonsense")
        assert any("Unknown command /nonsense" in n for n in notes)
        await send(pilot, "//code is a message")
        assert app.chat.query(UserMessage).last().text == "/code is a message"


async def test_input_is_multiline_and_keeps_a_history(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "one")
        await send(pilot, "two")
        prompt = app.chat.query_one(PromptInput)
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "two"
        await pilot.press("up")
        assert prompt.text == "one"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"


async def test_timings_show_on_demand(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hi")
        timings = answers(app)[0].query_one(".timings", Static)
        assert not timings.display
        await pilot.press("ctrl+t")
        assert timings.display
        assert "route 12 ms" in str(timings.content) and "first token 30 ms" in str(timings.content)


async def test_a_failed_turn_is_a_notice_not_a_crash(app: MacaronApp, notes: list[str]) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.fail_next = ContractError("the adapter blew up", hint="reload the profile")
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        assert app.is_running
        assert any("failed" in str(n.content) for n in app.chat.query(Note))
        assert any("What to do" in n for n in notes)
        await send(pilot, "hello again")  # the app goes on
        assert answers(app)[-1].item is not None
