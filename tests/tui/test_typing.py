"""Nothing the user types is dropped: focus after screen changes, keys typed elsewhere, the
queue of messages sent while a turn runs, and the first-run notice that leaves the input alone."""

from __future__ import annotations

import threading

import pytest

from macaron_local.tui.app import MacaronApp
from macaron_local.tui.widgets.banner import ExperienceBanner
from macaron_local.tui.widgets.messages import AssistantMessage, QueuedMessage, UserMessage
from macaron_local.tui.widgets.prompt import PromptInput
from macaron_local.tui.widgets.sidebar import Sidebar
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


def prompt_of(app: MacaronApp) -> PromptInput:
    return app.chat.query_one(PromptInput)


async def test_keys_typed_on_an_answer_or_the_session_list_reach_the_input(
    app: MacaronApp,
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        app.chat.query(AssistantMessage).last().focus()
        await pilot.pause()
        await pilot.press(*"hi there")
        assert prompt_of(app).text == "hi there" and app.focused is prompt_of(app)
        prompt_of(app).load_text("")
        app.chat.query_one(Sidebar).query_one("ListView").focus()
        await pilot.press(*"how")
        assert prompt_of(app).text == "how"
        await pilot.press("enter")  # the whole message and its Enter are kept
        await wait_for(pilot, lambda: chat(pilot).job is None)
        assert app.chat.query(UserMessage).last().text == "how"


async def test_focus_returns_to_the_input_after_a_modal_and_ctrl_n(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        app.chat.query(AssistantMessage).last().focus()
        await pilot.press("f1")
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.chat)
        await pilot.pause()
        assert app.focused is prompt_of(app)
        app.chat.query_one(Sidebar).query_one("ListView").focus()
        await pilot.press("ctrl+n", *"new one")
        await pilot.pause()
        assert chat(pilot).session_id is None
        assert prompt_of(app).text == "new one" and app.focused is prompt_of(app)


async def test_a_message_sent_during_a_turn_is_queued_then_sent(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        await send(pilot, "/code second", wait=False)
        await pilot.pause()
        queued = list(app.chat.query(QueuedMessage))
        assert [q.text for q in queued] == ["/code second"]
        assert "queued" in str(queued[0].content)
        assert prompt_of(app).text == ""  # not wiped: it is in the queue, shown as queued
        scripted.hold.set()
        await wait_for(
            pilot,
            lambda: len(app.chat.query(AssistantMessage)) == 2 and chat(pilot).job is None,
        )
        await pilot.pause()
        assert not app.chat.query(QueuedMessage)
        assert [u.text for u in app.chat.query(UserMessage)] == ["first", "second"]
        assert app.chat.query(AssistantMessage).last().badge_text == "L2 Coding · pinned"


async def test_a_queued_message_can_be_taken_back_and_a_cancel_sends_none(
    app: MacaronApp,
) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        await send(pilot, "second", wait=False)
        await send(pilot, "third", wait=False)
        await pilot.pause()
        await pilot.press("up")  # empty input: the newest queued message comes back
        assert prompt_of(app).text == "third"
        assert [q.text for q in app.chat.query(QueuedMessage)] == ["second"]
        prompt_of(app).load_text("")
        await pilot.press("escape")  # cancel: nothing queued is sent, all of it comes back
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert prompt_of(app).text == "first\n\nsecond"
        assert not app.chat.query(QueuedMessage)
        assert scripted.history(chat(pilot).session_id or "") == []


async def test_a_cancelled_one_turn_pin_comes_back_with_its_pin(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/agent list my files", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        await pilot.press("escape")
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert prompt_of(app).text == "/agent list my files"


async def test_the_first_run_notice_does_not_take_the_input_keys(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    scripted.experience_choice = None
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.query(ExperienceBanner))
        assert app.screen is app.chat and app.focused is prompt_of(app)
        await pilot.press(*"what is a list", "enter")
        await wait_for(pilot, lambda: chat(pilot).job is None and app.chat.query(UserMessage))
        assert app.chat.query(UserMessage).last().text == "what is a list"
        assert scripted.experience_choice is None  # Enter in the input chose nothing
        assert app.chat.query(ExperienceBanner)
        await pilot.press("f10")
        await wait_for(pilot, lambda: not app.chat.query(ExperienceBanner))
        assert scripted.experience_choice is False and app.focused is prompt_of(app)


async def test_typing_during_a_stream_defers_its_render_and_loses_no_text(
    app: MacaronApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys typed while an answer streams hold its Markdown render back until a pause (each
    render lays out the chat, and a key waits behind it); the streamed text is kept, and it
    is rendered once the hold ends."""
    from macaron_local.tui.widgets import messages

    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    scripted.hold = threading.Event()
    monkeypatch.setattr(messages, "TYPING_S", 3600.0)  # a key counts as "typing now"
    monkeypatch.setattr(messages, "MAX_DEFER_S", 3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "tell me about waves", wait=False)
        await wait_for(pilot, scripted.streaming.is_set)
        widget = app.chat.query(AssistantMessage).last()
        answer = widget.query_one(".answer", messages.Markdown)
        await wait_for(pilot, lambda: answer.source.strip() != "")  # nothing typed: renders
        await pilot.press(*"next q")
        widget.post_message(AssistantMessage.Piece(" MORE"))
        await wait_for(pilot, lambda: widget.text.endswith(" MORE"))
        await pilot.pause(4 * messages.RENDER_EVERY_S)  # render timers fire and wait
        assert "MORE" not in answer.source and prompt_of(app).text == "next q"
        monkeypatch.setattr(messages, "MAX_DEFER_S", 0.0)  # held long enough: render
        await wait_for(pilot, lambda: "MORE" in answer.source)
        scripted.hold.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        assert prompt_of(app).text == "next q"
