"""Generated-UI state is part of the session: ticks and values are kept, restored on a session
switch and a restart, and a form nothing handles says so and keeps its submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Button, Input, SelectionList, Static

from macaron_local.facade import HEAD, Assistant
from macaron_local.genui.catalogue import default_catalogue
from macaron_local.store import NewTurn, commit_turn, open_db
from macaron_local.tui.app import MacaronApp, make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.genui import GenUIView
from tests.tui.conftest import SIZE, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio
RUN_LOG = {
    "title": "Run log",
    "components": [
        {"type": "list", "id": "todo", "checkable": True, "items": ["Stretch", "Run", "Log"]},
        {"type": "input", "id": "shoes", "label": "Shoes", "kind": "text"},
        {
            "type": "form",
            "id": "log",
            "fields": [
                {"type": "input", "id": "km", "label": "Km", "kind": "text"},
                {"type": "input", "id": "pin", "label": "Watch PIN", "kind": "text", "noai": True},
            ],
            "submit": "Log it",
            "action": "reset",
        },
    ],
}


def _doc():
    return default_catalogue().document(RUN_LOG)


def _session(scripted: ScriptedAssistant) -> tuple[str, str]:
    sid = scripted.create_session("runs").id
    answer = "Here:\n```ui\n" + _doc().to_json() + "\n```"
    turn = scripted._commit(sid, "a run log", answer, "L3", "auto", HEAD)
    return sid, turn.id


async def _open(app: MacaronApp, pilot: object, sid: str) -> GenUIView:
    await app.chat.open_session(sid)
    await wait_for(pilot, lambda: app.chat.query(GenUIView))  # type: ignore[arg-type]
    await pilot.pause()  # type: ignore[attr-defined]
    return app.chat.query_one(GenUIView)


async def test_ticks_values_and_submissions_are_kept_and_restored(
    scripted: ScriptedAssistant, tmp_path: Path, notes: list[str], app: MacaronApp
) -> None:
    sid, turn = _session(scripted)
    async with app.run_test(size=SIZE) as pilot:
        view = await _open(app, pilot, sid)
        inputs = list(view.query(Input))
        inputs[1].value, inputs[2].value = "5", "1234"
        await pilot.pause()
        next(b for b in view.query(Button) if b.name == "log").press()
        await wait_for(pilot, lambda: any("Nothing handles this form" in n for n in notes))
        submitted = view.query_one(".ui-submitted", Static)
        assert "1 submission(s) kept" in str(submitted.render())
        [entry] = scripted.ui_kept[turn]["submissions"]
        assert entry["values"]["km"] == "5" and "pin" not in entry["values"]  # NoAI not kept
        view.query_one(SelectionList).select(0)  # after: the form's reset clears all
        view.query(Input).first().value = "red ones"
        await wait_for(pilot, lambda: scripted.ui_kept.get(turn, {}).get("values", {}).get("shoes"))
        await pilot.press("ctrl+n")  # switch away and back
        await pilot.pause()
        view = await _open(app, pilot, sid)
        assert view.read_state()["todo"] == [0] and view.read_state()["shoes"] == "red ones"
    again = make_app(Settings(), scripted)  # a restart over the same store
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = await _open(again, pilot, sid)
        assert view.read_state()["todo"] == [0]
        assert "1 submission(s) kept" in str(view.query_one(".ui-submitted", Static).render())


async def test_export_html_writes_the_interface_with_what_the_user_set(
    scripted: ScriptedAssistant, tmp_path: Path, notes: list[str], app: MacaronApp
) -> None:
    """``/export html`` writes the chat's generated UI as a page with its live state; the
    private (NoAI) value typed into it stays out of the file."""
    from macaron_local.tui.widgets.prompt import PromptInput

    sid, _ = _session(scripted)
    page = tmp_path / "out" / "run.html"
    async with app.run_test(size=SIZE) as pilot:
        view = await _open(app, pilot, sid)
        view.query_one(SelectionList).select(1)  # "Run" ticked
        inputs = list(view.query(Input))
        inputs[0].value, inputs[2].value = "trail shoes", "9876"
        await pilot.pause()
        prompt = app.chat.query_one(PromptInput)
        prompt.load_text(f"/export html {page}")
        await pilot.press("enter")
        await wait_for(pilot, page.exists)
    html = page.read_text(encoding="utf-8")
    assert 'data-id="todo"' in html and "trail shoes" in html and "9876" not in html
    assert '<input type="checkbox" checked> Run' in html  # the tick, not the initial state
    assert any("Exported the interface" in n for n in notes)


def test_the_facade_keeps_ui_state_in_the_store_without_noai_values(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    a = Assistant(db_path=db_path)
    sid = a.create_session("runs").id
    turn = commit_turn(
        open_db(db_path),
        sid,
        NewTurn(
            request="a run log",
            answer="(ui)",
            label="L3",
            route_kind="auto",
            adapter_revision="base",
            profile_hash="f" * 64,
        ),
        expected_head=None,
    )
    doc = _doc()
    values = {"todo": [0, 2], "shoes": "red", "km": "", "pin": "1234"}
    assert a.save_ui_state(turn.id, doc, values) == 0
    n = a.save_ui_state(
        turn.id, doc, values, submitted="log", submitted_values={"km": "5", "pin": "1234"}
    )
    assert n == 1
    kept = Assistant(db_path=db_path).ui_states([turn.id])[turn.id]  # a new process reads it
    assert kept["values"] == {"todo": [0, 2], "shoes": "red", "km": ""}
    assert kept["submissions"][0]["form"] == "log" and kept["submissions"][0]["values"] == {
        "km": "5"
    }
    raw = json.dumps(open_db(db_path).execute("SELECT * FROM ui_state").fetchall())
    assert "1234" not in raw  # a NoAI value never reaches SQLite
