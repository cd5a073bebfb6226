"""Every catalogue component renders as a live widget and round-trips its state; gestures
become Actions; an L3 answer renders progressively in the chat and its actions run."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable, Switch

from macaron_local.facade import NO_EVENTS, TurnEvents, TurnItem, TurnRequest
from macaron_local.genui.catalogue import Document
from macaron_local.tui.widgets.genui import GenUIView, RangeBox, TableBox
from macaron_local.tui.widgets.messages import AssistantMessage
from macaron_local.turns.route import RouteResult
from tests.genui.conftest import NEW_STATE, SECRET
from tests.tui.conftest import SIZE, chat, send, wait_for
from tests.tui.scripted import ScriptedAssistant

pytestmark = pytest.mark.anyio


class OneUi(App[None]):
    def __init__(self, doc: Document) -> None:
        super().__init__()
        self.doc = doc
        self.actions: list[Any] = []

    def compose(self) -> ComposeResult:
        yield GenUIView(self.doc)

    @on(GenUIView.ActionRaised)
    def got(self, event: GenUIView.ActionRaised) -> None:
        self.actions.append(event.action)


async def test_every_component_renders_and_round_trips_its_state(sink: Document) -> None:
    app = OneUi(sink)
    async with app.run_test(size=(120, 80)) as pilot:
        view = app.query_one(GenUIView)
        await pilot.pause()
        names = {w.name for w in view.query("*")}
        assert {c.id for c in sink.walk()} <= names
        assert view.read_state() == sink.initial_state()
        view.write_state(NEW_STATE)
        await pilot.pause()
        assert view.read_state() == NEW_STATE
        rows = view.query_one(TableBox).query_one(DataTable)
        assert rows.row_count == 2  # filter "a": Basic and Team
        assert rows.get_row_at(0)[0] == "Team"  # sorted by price, descending
        view.write_state(sink.initial_state())
        await pilot.pause()
        assert view.read_state() == sink.initial_state()


async def test_gestures_become_local_actions_and_reset_restores(sink: Document) -> None:
    app = OneUi(sink)
    async with app.run_test(size=(120, 80)) as pilot:
        view = app.query_one(GenUIView)
        await pilot.pause()
        budget = next(w for w in view.query(RangeBox) if w.component.id == "budget")
        next(b for b in budget.query(Button) if b.name == "inc").press()
        await pilot.pause()
        yearly = next(w for w in view.query(Switch) if w.name == "yearly")
        yearly.toggle()
        await pilot.pause()
        table = view.query_one(TableBox).query_one(DataTable)
        table.post_message(
            DataTable.HeaderSelected(
                table, table.ordered_columns[1].key, 1, table.ordered_columns[1].label
            )
        )
        await pilot.pause()
        assert view.read_state()["budget"] == 45 and view.read_state()["yearly"] is False
        assert view.read_state()["prices"]["sort"] == 1
        kinds = [(a.origin.component_id, a.origin.gesture, a.execution.kind) for a in app.actions]
        assert ("budget", "change", "local") in kinds
        assert ("yearly", "change", "local") in kinds
        assert ("prices", "sort", "local") in kinds
        reset = next(w for w in view.query(Button) if w.name == "reset")
        reset.press()
        await pilot.pause()
        assert app.actions[-1].execution.reset
        assert view.read_state() == sink.initial_state()


class UiAssistant(ScriptedAssistant):
    """Answers every turn with ``answer`` as L3, in 8-char pieces; can hold mid-stream."""

    def __init__(self, answer: str, hold_at: int) -> None:
        super().__init__()
        self.answer, self.hold_at = answer, hold_at
        self.release = threading.Event()
        self.requests: list[str] = []
        self.tool_calls: list[tuple[str, Any]] = []

    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnItem:
        self.requests.append(request.text)
        events.routed(RouteResult("L3", "manual" if request.label else "auto"))
        for at in range(0, len(self.answer), 8):
            if at >= self.hold_at:
                self.release.wait(30)
            if events.on_text:
                events.on_text(self.answer[at : at + 8])
        return self._commit(
            request.session_id, request.text, self.answer, "L3", "auto", request.parent_id
        )

    def ui_tool(self, session_id: str, action: Any, doc: Document, *, confirm: Any = None) -> str:
        self.tool_calls.append((session_id, action))
        return "saved"

    def ui_send(
        self,
        session_id: str,
        action: Any,
        doc: Document,
        events: TurnEvents = NO_EVENTS,
        *,
        turn_id: str | None = None,
    ) -> TurnItem:
        item = super().ui_send(session_id, action, doc, events, turn_id=turn_id)
        self.requests.append(item.request)
        return item


async def test_an_l3_answer_renders_progressively_and_its_actions_run(
    sink: Document, tmp_path: Any
) -> None:
    from macaron_local.tui.app import make_app
    from macaron_local.tui.settings import Settings

    answer = "Here is everything.\n```ui\n" + sink.to_json() + "\n```"
    first_end = answer.index('"components": [') + len(sink.components[0].model_dump_json()) + 40
    assistant = UiAssistant(answer, hold_at=first_end + 200)
    settings = Settings(export_dir=tmp_path / "exports")
    app = make_app(settings, assistant, settings_file=tmp_path / "settings.toml")
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "show me everything", wait=False)
        await wait_for(
            pilot,
            lambda: (
                bool(app.chat.query(GenUIView)) and bool(app.chat.query_one(GenUIView).components)
            ),
        )
        view = app.chat.query_one(GenUIView)
        assert chat(pilot).job is not None  # still streaming
        assert 1 <= len(view.components) < len(sink.components)
        assert view.document is None
        assistant.release.set()
        await wait_for(pilot, lambda: chat(pilot).job is None)
        await pilot.pause()
        view = app.chat.query_one(GenUIView)
        assert view.document == sink and view.components == list(sink.components)
        message = app.chat.query(AssistantMessage).last()
        assert "```" not in message.query_one(".answer").source
        view.write_state({"email": "ada@example.org", "card": SECRET})
        submit = next(w for w in view.query(Button) if w.name == "signup")
        submit.press()
        await wait_for(pilot, lambda: len(assistant.requests) == 2)
        await wait_for(pilot, lambda: chat(pilot).job is None)
        sent = assistant.requests[1]
        assert assistant.ui_sent[0][0] == assistant.history(chat(pilot).session_id)[0].id
        assert assistant.history(chat(pilot).session_id)[-1].route_kind == "sticky"
        assert sent.startswith("[ui] Everything: Sign up") and "ada@example.org" in sent
        assert SECRET not in sent and "private" in sent
        save = next(w for w in app.chat.query_one(GenUIView).query(Button) if w.name == "save")
        save.press()
        await wait_for(pilot, lambda: bool(assistant.tool_calls))
        assert assistant.tool_calls[0][1].execution.tool == "notes.add"


class ConfirmingUi(UiAssistant):
    """The scripted assistant's own ``ui_tool``: allowlist, then the app's confirmation."""

    ui_tool = ScriptedAssistant.ui_tool


async def test_a_side_effecting_ui_tool_asks_the_user_first(sink: Document, tmp_path: Any) -> None:
    from macaron_local.tui.app import make_app
    from macaron_local.tui.screens.confirm import ConfirmScreen
    from macaron_local.tui.settings import Settings

    assistant = ConfirmingUi("Saved form.\n```ui\n" + sink.to_json() + "\n```", hold_at=10**9)
    settings = Settings(export_dir=tmp_path / "exports")
    app = make_app(settings, assistant, settings_file=tmp_path / "settings.toml")
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "a form please")
        await wait_for(pilot, lambda: chat(pilot).job is None and bool(app.chat.query(GenUIView)))
        view = app.chat.query_one(GenUIView)
        view.write_state({"email": "ada@example.org", "card": SECRET})
        for answer, calls in (("yes", 1), ("no", 1)):
            next(w for w in view.query(Button) if w.name == "save").press()
            await wait_for(pilot, lambda: dialog_ready(app))
            assert "notes.add" in str(app.screen.question)
            app.screen.query_one(f"#{answer}", Button).press()
            await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
            await wait_for(pilot, lambda: ui_tools_done(app))
            assert len(assistant.tool_calls) == calls
        name, args = assistant.tool_calls[0]
        assert name == "notes.add" and SECRET not in str(args)


def dialog_ready(app: Any) -> bool:
    """The "Run tool?" dialog is on screen with its buttons built (pushing it comes first)."""
    from macaron_local.tui.screens.confirm import ConfirmScreen

    return isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes"))


def ui_tools_done(app: Any) -> bool:
    """Every generated UI's tool call has come back (the worker asked, ran or declined)."""
    return all(w.is_finished for w in app.workers if w.group == "ui-tool")


async def open_tool_question(pilot: Any, app: Any, assistant: Any, *, wait: bool = True) -> None:
    """Draw the form, press its side-effecting "save": the "Run notes.add?" dialog opens."""

    await send(pilot, "a form please")
    await wait_for(pilot, lambda: chat(pilot).job is None and bool(app.chat.query(GenUIView)))
    view = app.chat.query_one(GenUIView)
    view.write_state({"email": "ada@example.org"})
    next(w for w in view.query(Button) if w.name == "save").press()
    if wait:
        await wait_for(pilot, lambda: dialog_ready(app))


@pytest.mark.timeout(120)
async def test_quitting_with_a_tool_question_open_is_a_no_and_does_not_wait(
    sink: Document, tmp_path: Any
) -> None:
    from macaron_local.tui.app import make_app
    from macaron_local.tui.settings import Settings

    assistant = ConfirmingUi("Saved form.\n```ui\n" + sink.to_json() + "\n```", hold_at=10**9)
    app = make_app(Settings(), assistant, settings_file=tmp_path / "settings.toml")
    async with app.run_test(size=SIZE) as pilot:
        await open_tool_question(pilot, app, assistant)
        workers = [w for w in app.workers if w.group == "ui-tool"]
        app.exit()  # the question is still open: before, the worker waited 10 minutes
    assert workers and all(w.is_finished for w in workers)
    assert assistant.tool_calls == []


async def test_an_unanswered_tool_question_is_withdrawn_and_says_no_answer(
    sink: Document, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from macaron_local.tui.app import make_app
    from macaron_local.tui.screens import chat as chat_screen
    from macaron_local.tui.screens.confirm import ConfirmScreen
    from macaron_local.tui.settings import Settings

    monkeypatch.setattr(chat_screen, "CONFIRM_TIMEOUT_S", 0.5)
    assistant = ConfirmingUi("Saved form.\n```ui\n" + sink.to_json() + "\n```", hold_at=10**9)
    app = make_app(Settings(), assistant, settings_file=tmp_path / "settings.toml")
    shown: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "notify", lambda text, **kw: shown.append(str(text)))
        pushed: list[Any] = []
        push = app.push_screen
        monkeypatch.setattr(
            app, "push_screen", lambda s, *a, **k: pushed.append(s) or push(s, *a, **k)
        )
        # the dialog may come and go within the short timeout on a busy machine: wait for the end
        await open_tool_question(pilot, app, assistant, wait=False)
        await wait_for(pilot, lambda: any("no answer" in text for text in shown))
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await wait_for(pilot, lambda: ui_tools_done(app))
    assert any(isinstance(s, ConfirmScreen) for s in pushed)  # it was asked, then withdrawn
    assert assistant.tool_calls == []
    assert any("no answer" in text and "notes.add did not run" in text for text in shown), shown
