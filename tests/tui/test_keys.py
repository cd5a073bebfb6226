"""Keys: remaps checked for conflicts, / completion, the input history kept across restarts
with prefix search, Ctrl+O's cursor, and F12's theme kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.screens.settings import SettingsScreen
from macaron_local.tui.settings import Settings, load_settings
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.prompt import PromptInput
from tests.tui.conftest import SIZE, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


def prompt_of(app: MacaronApp) -> PromptInput:
    return app.chat.query_one(PromptInput)


async def test_a_remap_the_input_box_shadows_is_warned(
    scripted: ScriptedAssistant, tmp_path: Path
) -> None:
    app = make_app(Settings(keys={"chat.retry": "ctrl+y"}), scripted)
    seen: list[str] = []
    app.notify = lambda message, **kw: seen.append(f"{kw.get('title')}: {message}")  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any("chat.retry=ctrl+y: the input box uses ctrl+y" in n for n in seen)
        seen.clear()
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        app.screen.query_one("#keys", Input).value = "chat.retry=ctrl+n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert any("chat.retry=ctrl+n: chat.new_session has ctrl+n too" in n for n in seen)
        seen.clear()
        app.screen.query_one("#keys", Input).value = "chat.retry=ctrl+g"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not any("shadowed" in n for n in seen)


async def test_slash_commands_complete_with_tab(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/co")
        hint = app.chat.query_one("#completions", Static)
        await wait_for(pilot, lambda: "/code" in str(hint.content))
        assert "/copy" in str(hint.content) and "/correct" in str(hint.content)
        await pilot.press("d", "tab")
        assert prompt_of(app).text == "/code "
        await pilot.press(*"hello", "enter")
        await wait_for(pilot, lambda: app.chat.query(AssistantMessage) and app.chat.job is None)
        assert app.chat.query(AssistantMessage).last().badge_text == "L2 Coding · pinned"
        assert not hint.display


async def test_history_is_kept_across_restarts_and_searched_by_prefix(
    scripted: ScriptedAssistant, tmp_path: Path
) -> None:
    history = tmp_path / "data" / "tui" / "history.jsonl"
    first = make_app(Settings(), scripted, history_file=history)
    async with first.run_test(size=SIZE) as pilot:
        for text in ("one fish", "two fish", "one more", "red fish"):
            await send(pilot, text)
    again = make_app(Settings(), scripted, history_file=history)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        prompt = prompt_of(again)
        await pilot.press("up")
        assert prompt.text == "red fish"
        prompt.load_text("")
        await pilot.press("o", "n", "up")
        assert prompt.text == "one more"
        await pilot.press("up")
        assert prompt.text == "one fish"
        await pilot.press("up")  # nothing older starts with "on"
        assert prompt.text == "one fish"
        await pilot.press("down", "down")
        assert prompt.text == "on"  # back to the draft


async def test_ctrl_o_leaves_the_cursor_at_the_end(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "a message\nover two lines")
        await pilot.press("ctrl+o")
        prompt = prompt_of(app)
        assert prompt.text == "a message\nover two lines"
        assert prompt.cursor_location == prompt.document.end


async def test_f12_theme_is_kept(app: MacaronApp, tmp_path: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f12")
        await pilot.pause()
        assert app.theme == "textual-light"
    assert load_settings(tmp_path / "settings.toml").theme == "light"
