"""The app side of learning after deployment: the first-run explainer, the experience settings,
"do not learn from this chat", feedback wording and the refine screen.

The real facade over a real SQLite store drives what touches the experience log (its model is
never loaded: ``StoreOnly`` skips ``start``); the scripted assistant drives the UI-only parts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Label, Log, ProgressBar, Select, Static, Switch

from macaron_local import experience
from macaron_local.experience.settings import user_choice
from macaron_local.facade import NOT_KEPT, Assistant, AssistantProtocol, RefineHandle
from macaron_local.hcp import load_profile
from macaron_local.store import get_session, open_db
from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.commands import COMMANDS
from macaron_local.tui.palette import MacaronCommands
from macaron_local.tui.screens.chat import ChatScreen
from macaron_local.tui.screens.confirm import ConfirmScreen
from macaron_local.tui.screens.help import HelpScreen
from macaron_local.tui.screens.refine import RefineScreen
from macaron_local.tui.screens.settings import SettingsScreen
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.banner import ExperienceBanner
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.tui.widgets.sidebar import NOLEARN, Sidebar
from tests.experience.helpers import commit
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


class StoreOnly(Assistant):
    """The real facade and store; the model is never loaded (no test here needs it)."""

    def start(self) -> None:
        pass


def real_app(tmp_path: Path) -> tuple[MacaronApp, StoreOnly, Any]:
    db_path = tmp_path / "macaron.db"
    assistant = StoreOnly("tall-local", db_path=db_path)
    app = make_app(Settings(), assistant, settings_file=tmp_path / "settings.toml")
    return app, assistant, open_db(db_path)


def recorded(app: MacaronApp) -> list[str]:
    seen: list[str] = []
    original = app.notify

    def record(message: str, **kwargs: Any) -> None:
        seen.append(f"{kwargs.get('title', '')}: {message}")
        original(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    return seen


async def press_button(pilot: Any, selector: str) -> None:
    pilot.app.screen.query_one(selector, Button).focus()
    await pilot.press("enter")
    await pilot.pause()


# --- first run -----------------------------------------------------------------------------


async def test_first_run_explains_and_stores_the_choice_once(tmp_path: Path) -> None:
    app, _, _ = real_app(tmp_path)
    assert user_choice() is None
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.screen.query(ExperienceBanner))
        text = str(app.screen.query_one("#explainer-text", Static).render())
        assert "Nothing leaves this machine" in text and "macaron experience purge" in text
        assert isinstance(app.screen, ChatScreen)  # a notice above the chat, not a modal
        assert app.screen.focused is app.screen.query_one("#prompt")  # Enter never opts in
        await press_button(pilot, "#keep")
        await wait_for(pilot, lambda: not app.screen.query(ExperienceBanner))
    assert user_choice() is True
    again, _, _ = real_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(again.screen, ChatScreen)
        assert not again.screen.query(ExperienceBanner)


async def test_escape_on_the_explainer_means_not_now(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    scripted.experience_choice = None
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.chat.query(ExperienceBanner))
        app.chat.query_one("#keep").focus()  # Tabbed to the notice's buttons, Esc is "Not now"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.chat.query(ExperienceBanner))
    assert scripted.experience_choice is False


# --- settings ------------------------------------------------------------------------------


async def test_settings_toggle_and_purge_on_a_real_store(tmp_path: Path) -> None:
    experience.set_user_choice(False)
    app, assistant, db = real_app(tmp_path)
    sid = assistant.create_session("facts").id
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(app.screen, SettingsScreen))
        screen = app.screen
        assert "off · 0 turns kept" in str(screen.query_one("#experience-status").render())
        screen.query_one("#experience", Switch).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: user_choice() is True)
        profile = load_profile("tall-local")
        for q in ("my dog is Biscuit", "I live in Tromsø"):
            assert experience.record_turn(db, profile, commit(db, sid, q, "noted")) is not None
        await press_button(pilot, "#purge")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # not confirmed: nothing is deleted
        await wait_for(pilot, lambda: app.screen is screen)
        assert len(experience.rows(db)) == 2
        await press_button(pilot, "#purge")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await press_button(pilot, "#yes")
        await wait_for(pilot, lambda: app.screen is screen)
        assert experience.rows(db) == []
        assert "on · 0 turns kept" in str(screen.query_one("#experience-status").render())
        screen.query_one("#experience", Switch).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: user_choice() is False)


# --- do not learn from this chat -----------------------------------------------------------


async def test_nolearn_marks_the_chat_and_nothing_more_is_kept(tmp_path: Path) -> None:
    experience.set_user_choice(True)
    app, assistant, db = real_app(tmp_path)
    profile = load_profile("tall-local")
    sid = assistant.create_session("private").id
    experience.record_turn(db, profile, commit(db, sid, "my PIN hint is blue", "noted"))
    async with app.run_test(size=SIZE) as pilot:
        await chat(pilot).open_session(sid)
        await send(pilot, "/nolearn")
        assert get_session(db, sid).exclude_from_learning
        assert experience.rows(db) == []  # what was kept from it is gone too
        [row] = app.chat.query_one(Sidebar).rows
        assert row.text == f"{NOLEARN}private"
        status = app.chat.query_one("#status")
        await wait_for(pilot, lambda: "not learning from this chat" in str(status.render()))
        # what the runtime does right after each commit: keeps nothing from this chat
        turn = commit(db, sid, "another secret", "noted")
        assert experience.record_turn(db, profile, turn) is None
        await send(pilot, "/nolearn")
        assert not get_session(db, sid).exclude_from_learning
        assert app.chat.query_one(Sidebar).rows[0].text == "private"
    assert experience.record_turn(db, profile, commit(db, sid, "fine now", "ok")) is not None


async def test_nolearn_before_the_first_message_applies_to_the_new_chat(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    scripted.experience_choice = True
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "/nolearn")
        await send(pilot, "keep this between us")
        [session] = scripted.list_sessions()
        assert session.excluded and scripted.kept == {}
        assert app.chat.query_one(Sidebar).rows[0].text.startswith(NOLEARN)


# --- feedback wording ----------------------------------------------------------------------


async def test_feedback_says_why_it_is_not_kept_and_when_it_is(tmp_path: Path) -> None:
    experience.set_user_choice(False)
    app, assistant, db = real_app(tmp_path)
    sid = assistant.create_session("rate").id
    turn = commit(db, sid, "what is my dog called?", "I don't know.")
    notes = recorded(app)
    async with app.run_test(size=SIZE) as pilot:
        await chat(pilot).open_session(sid)
        app.chat.query(AssistantMessage).last().focus()
        await pilot.press("plus")
        assert notes[-1] == f"Feedback not kept: {NOT_KEPT}"
        assert "experience logging is off" in NOT_KEPT and "Settings (F3)" in NOT_KEPT
        experience.set_user_choice(True)
        experience.record_turn(db, load_profile("tall-local"), turn)
        await send(pilot, "/correct Your dog is called Biscuit.")
        assert notes[-1] == "Feedback kept: kept your correction locally for learning"
    [row] = experience.rows(db)
    assert row.last("correction") == "Your dog is called Biscuit."


# --- refine --------------------------------------------------------------------------------


async def refine_screen(pilot: Any) -> RefineScreen:
    """Wait until the refine screen is up and composed."""
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, RefineScreen) and app.screen.query("#refine-result")
    )
    await pilot.pause()
    return app.screen  # type: ignore[no-any-return]


async def test_refine_screen_starts_shows_progress_and_cancels(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f8")
        screen = await refine_screen(pilot)
        screen.query_one("#refine-label", Select).value = "L2"
        await press_button(pilot, "#refine-start")
        await wait_for(pilot, lambda: app.refine_handle is not None)
        [run] = scripted.refines
        assert run.label == "L2" and isinstance(run, RefineHandle)
        run.advance(2)
        await wait_for(pilot, lambda: screen.query_one(ProgressBar).progress == 2)
        assert "L2 · step 2/4 · running" in str(screen.query_one("#refine-state", Label).render())
        await wait_for(pilot, lambda: screen.query_one(Log).line_count == 3)
        assert "step 2/4" in screen.query_one(Log).lines[-1]
        await press_button(pilot, "#refine-cancel")
        assert run.cancelled
        await wait_for(
            pilot, lambda: "cancelling" in str(screen.query_one("#refine-state", Label).render())
        )
        assert screen.query_one("#refine-cancel", Button).disabled
        run.advance()
        await wait_for(
            pilot, lambda: "Cancelled" in str(screen.query_one("#refine-result", Static).render())
        )
        assert "nothing was registered" in str(screen.query_one("#refine-result").render())
        assert not screen.query_one("#refine-start", Button).disabled


async def test_refine_screen_shows_the_report_and_outlives_leaving(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await app.run_slash("refine")  # the palette runs the same command
        await refine_screen(pilot)
        await press_button(pilot, "#refine-start")
        await wait_for(pilot, lambda: app.refine_handle is not None)
        await pilot.press("escape")  # the run goes on without the screen
        await wait_for(pilot, lambda: isinstance(app.screen, ChatScreen))
        scripted.refines[0].finish()
        await pilot.press("f8")
        screen = await refine_screen(pilot)
        await wait_for(pilot, lambda: "Kept" in str(screen.query_one("#refine-result").render()))
        text = str(screen.query_one("#refine-result").render())
        assert "Kept, not promoted: rev-abc kept unpromoted" in text
        assert "gate: held-out nll improved by less than 0.01" in text
        assert "heldout.nll: 2.5 -> 2.45" in text and "regression.route_acc: 0.9 -> –" in text
        assert "Plots: /runs/L0-x/loss.png  /runs/L0-x/gate.png" in text
        assert len(scripted.refines) == 1


async def test_help_lists_the_refine_key_and_the_new_commands(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        ids = [row[3] for row in app.screen.rows]  # type: ignore[attr-defined]
        assert {"app.refine", "refine.start", "refine.cancel"} <= set(ids)
        palette = {name for name, _ in MacaronCommands(app.screen)._commands()}
    assert {"nolearn", "refine"} <= palette and {"nolearn", "refine"} <= set(COMMANDS)


# --- the facade on a real refine run -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_facade_starts_a_real_refine_and_cancel_registers_nothing(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from macaron_local import lineage
    from macaron_local.refine.gate import GateConfig
    from macaron_local.refine.refine_loop import RefineConfig

    experience.set_user_choice(True)
    assistant = StoreOnly("tall-local", db_path=tmp_path / "macaron.db")
    assert isinstance(assistant, AssistantProtocol)
    db, profile = open_db(tmp_path / "macaron.db"), load_profile("tall-local")
    sid = assistant.create_session("facts").id
    for q, a in (
        ("Where do I live?", "You live in Tromsø."),
        ("What is my job?", "You are a beekeeper."),
        ("What do I drink?", "You drink green tea."),
    ):
        t = commit(db, sid, q, "I don't know.")
        experience.record_turn(db, profile, t)
        experience.record_feedback(db, profile, t.id, "correction", a)
    config = RefineConfig(
        steps=3,
        batch_size=2,
        dpo_batch=1,
        heldout_fraction=0.34,
        gate=GateConfig(regression_limit=3),
    )
    handle = assistant.start_refine("L0", config=config)
    handle.cancel()
    assert handle.progress().cancelling or handle.progress().done
    outcome = handle.join(540)
    progress = handle.progress()
    assert progress.error is None and progress.done, progress.error
    assert outcome is not None and outcome.status == "cancelled" and outcome.revision is None
    assert "nothing was registered" in outcome.summary
    assert lineage.store_snapshot() == {}
    assert lineage.get_policy(profile.id).serving == {}


async def test_a_refine_with_nothing_to_learn_says_why(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    experience.set_user_choice(True)
    app, _, _ = real_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f8")
        screen = await refine_screen(pilot)
        await press_button(pilot, "#refine-start")
        await wait_for(
            pilot,
            lambda: "failed" in str(screen.query_one("#refine-result", Static).render()),
            timeout=120,
        )
        text = str(screen.query_one("#refine-result", Static).render())
        assert "no experience to learn L0 from yet" in text
        assert not screen.query_one("#refine-start", Button).disabled
