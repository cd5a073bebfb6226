"""The smaller things a day of use found: the refine screen's wording, search hits that say what
matched, the inspector's summary refreshing, a marked duplicate import, the palette screenshot
without ~/Downloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from macaron_local.facade import Assistant
from macaron_local.store import NewTurn, commit_turn, open_db
from macaron_local.tui.app import MacaronApp
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.sidebar import Sidebar
from tests.tui.conftest import SIZE, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio
NOTHING = (
    "no experience to learn L0 from yet (hint: opt in (macaron experience on), then correct or "
    "rate answers)"
)


async def test_refine_says_feedback_is_missing_when_turns_are_kept(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    scripted.experience_choice = True
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        await pilot.press("f8")
        await wait_for(pilot, lambda: app.screen.query("#refine-start"))
        app.screen.query_one("#refine-start").focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.refine_handle is not None)
        scripted.refines[0].fail(NOTHING)
        result = app.screen.query_one("#refine-result", Static)
        await wait_for(pilot, lambda: "failed" in str(result.render()))
        text = str(result.render())
        assert "1 L0 turn(s) are kept, but none has feedback" in text and "opt in" not in text


async def test_search_hits_say_what_matched(app: MacaronApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "about cats")
        await send(pilot, "/rename cats and dogs")
        await pilot.press("ctrl+f", *"cats")
        sidebar = app.chat.query_one(Sidebar)
        await wait_for(pilot, lambda: len(sidebar.rows) >= 2)
        shown = [str(row.query_one("Label", Static).render()) for row in sidebar.rows]
        assert shown[0].startswith("▣ ")  # the title matched
        assert any(s.startswith("cats and dogs\n↳ ") for s in shown[1:])  # a turn matched


async def test_the_inspector_shows_the_summary_once_it_is_written(
    scripted: ScriptedAssistant, app: MacaronApp
) -> None:
    scripted.summaries_written = False
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "hello")
        body = app.chat.query_one(Inspector).query_one("#inspector-body", Static)
        assert "(not written yet)" in str(body.render())
        scripted.summaries_written = True  # the background summary is stored now
        await wait_for(pilot, lambda: "summary of 'hello'" in str(body.render()))


def test_an_import_of_an_existing_chat_is_marked(tmp_path: Path) -> None:
    a = Assistant(db_path=tmp_path / "m.db")
    sid = a.create_session("notes").id
    turn = NewTurn(
        request="hi",
        answer="hello",
        label="L0",
        route_kind="auto",
        adapter_revision="base",
        profile_hash="f" * 64,
    )
    commit_turn(open_db(tmp_path / "m.db"), sid, turn, expected_head=None)
    exported = a.export_session(sid, "json")
    copy = a.import_session(exported)
    titles = {s.id: s.title for s in a.list_sessions()}
    assert titles[sid] == "notes" and titles[copy] == "notes (imported copy)"
    assert json.loads(exported)  # the export itself is unchanged JSON


async def test_the_palette_screenshot_works_without_downloads(
    app: MacaronApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_downloads_path", lambda: tmp_path / "no-downloads")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.deliver_screenshot("shot.svg")
        target = tmp_path / "exports" / "shot.svg"
        await wait_for(pilot, target.exists)
    assert "<svg" in target.read_text()
