"""Pilot tests of sessions, the inspector, profiles, settings, help, palette and feedback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static, Switch

from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.screens.help import HelpScreen
from macaron_local.tui.screens.profiles import ProfilesScreen
from macaron_local.tui.screens.settings import SettingsScreen
from macaron_local.tui.settings import Settings, load_settings
from macaron_local.tui.widgets.messages import AssistantMessage, UserMessage
from macaron_local.tui.widgets.sidebar import Sidebar
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


def titles(app: MacaronApp) -> list[str]:
    return [r.text for r in app.chat.query_one(Sidebar).rows]


async def test_sessions_new_rename_search_open(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "about cats")
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert chat(pilot).session_id is None and not app.chat.query(UserMessage)
        await send(pilot, "about dogs")
        assert titles(app) == ["about dogs", "about cats"]
        await send(pilot, "/rename Dog notes")
        assert titles(app)[0] == "Dog notes" and app.chat.sub_title == "Dog notes"
        await pilot.press("ctrl+f")
        await pilot.press(*"cats")
        await wait_for(pilot, lambda: titles(app) and "cats" in titles(app)[0])
        sidebar = app.chat.query_one(Sidebar)
        sidebar.query_one("ListView").focus()
        await pilot.press("down", "enter")
        await wait_for(
            pilot,
            lambda: (
                app.chat.query(UserMessage)
                and app.chat.query(UserMessage).last().text == "about cats"
            ),
        )


async def test_delete_with_undo(app: MacaronApp, notes: list[str]) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "keep me")
        sid = chat(pilot).session_id
        await send(pilot, "/delete")
        assert titles(app) == [] and chat(pilot).session_id is None
        assert any("Deleted" in n and "/undo" in n for n in notes)
        await send(pilot, "/undo")
        assert titles(app) == ["keep me"] and chat(pilot).session_id == sid
        # from the list: d deletes the highlighted row, u brings it back
        view = app.chat.query_one(Sidebar).query_one("ListView")
        view.focus()
        await pilot.press("d")
        await wait_for(pilot, lambda: titles(app) == [])
        await pilot.press("u")
        await wait_for(pilot, lambda: titles(app) == ["keep me"])


async def test_export_and_import(app: MacaronApp, tmp_path: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "export me")
        await send(pilot, "/export md")
        await send(pilot, f"/export json {tmp_path / 'out.json'}")
        exported = list((tmp_path / "exports").glob("macaron-export-me-*.md"))
        assert len(exported) == 1 and "export me" in exported[0].read_text()
        doc = json.loads((tmp_path / "out.json").read_text())
        assert doc["turns"][0][0] == "export me"
        await send(pilot, f"/import {tmp_path / 'out.json'}")
        assert titles(app)[0] == "export me (imported)"
        assert [u.text for u in app.chat.query(UserMessage)] == ["export me"]


async def test_inspector_shows_the_selected_turn_and_its_summary(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "first")
        await send(pilot, "write code")
        body = app.chat.query_one("#inspector-body", Static)
        assert "L2 Coding" in str(body.content) and "85.0%" in str(body.content)
        await pilot.press("ctrl+up")
        await pilot.pause()
        text = str(body.content)
        assert "Turn t2" in text and "L0 Chat" in text
        assert "summary of 'first'" in text and "Adapter revision base" in text
        assert "Profile hash abababab" in text and "completion" in text
        chat_text = " ".join(m.text for m in app.chat.query(AssistantMessage))
        assert "summary of" not in chat_text  # summaries never appear in the chat
        await pilot.press("f4")
        assert not app.chat.query_one("#inspector").display


async def test_feedback_says_it_is_not_kept(app: MacaronApp, notes: list[str]) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "rate me")
        app.chat.query(AssistantMessage).last().focus()
        await pilot.press("plus")
        await send(pilot, "/correct a better answer")
        assert scripted.feedback_calls[0][1] == "up"
        assert scripted.feedback_calls[1][1:] == ("correction", "a better answer")
        assert sum("not kept" in n for n in notes) == 2


async def test_profiles_screen(app: MacaronApp) -> None:
    scripted: ScriptedAssistant = app.assistant  # type: ignore[assignment]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, ProfilesScreen))
        await pilot.pause()
        report = app.screen.query_one("#profile-report", Static)
        model = app.screen.query_one("#model-report", Static)
        assert "tall-local" in str(report.content) and "valid" in str(report.content)
        assert "SmolLM2-135M-Instruct" in str(model.content)
        assert "L3: scripted warning" in str(model.content)
        await pilot.press("up")  # "broken"
        await pilot.pause()
        assert "Validation errors" in str(report.content)
        assert "line 3" in str(report.content)
        await pilot.press("down", "down")  # "wide-tools"
        await pilot.pause()
        assert "waiting for approval" in str(report.content)
        await pilot.press("u")  # refused: it is not approved
        assert scripted.profile == "tall-local"
        await pilot.press("escape")
        assert not isinstance(app.screen, ProfilesScreen)


async def test_settings_screen_saves_and_applies(app: MacaronApp, tmp_path: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        screen = app.screen
        screen.query_one("#theme").value = "light"  # type: ignore[attr-defined]
        screen.query_one("#show_timings", Switch).value = True
        screen.query_one("#keys", Input).value = "chat.retry=ctrl+g"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.theme == "textual-light"
        saved = load_settings(tmp_path / "settings.toml")
        assert saved.theme == "light" and saved.show_timings
        assert saved.keys == {"chat.retry": "ctrl+g"}
        await pilot.press("escape")
        await send(pilot, "hello")
        await pilot.press("ctrl+g")  # the remapped retry
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        assert (
            app.chat.query(AssistantMessage)
            .last()
            .badge_text.endswith("branch 2/2 ([ ] to browse)")
        )


async def test_help_lists_keys_with_overrides(scripted: ScriptedAssistant) -> None:
    app = make_app(Settings(keys={"chat.copy": "ctrl+k"}), scripted)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = {row[3]: row[1] for row in app.screen.rows}  # type: ignore[attr-defined]
        assert rows["chat.copy"] == "ctrl+k" and rows["chat.cancel"] == "escape"
        assert {"app.help", "sessions.delete", "answer.good"} <= set(rows)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def palette_offers(app: MacaronApp, text: str) -> bool:
    """The open command palette lists a command matching ``text`` (its search is a worker)."""
    from textual.command import CommandList, CommandPalette

    screen = app.screen
    if not isinstance(screen, CommandPalette):
        return False
    options = screen.query_one(CommandList)
    return any(
        text in str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
    )


async def test_command_palette_runs_slash_commands(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "something")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/timings")
        await wait_for(pilot, lambda: palette_offers(app, "/timings"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.query_one("#chat").has_class("-timings"))


async def test_theme_toggle(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "textual-dark"
        await pilot.press("f12")
        assert app.theme == "textual-light"
