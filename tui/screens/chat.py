"""The chat screen: sessions sidebar, the conversation, the input, the inspector.

Owns: turning the user's input into turns (each in a thread worker, cancellable with Esc) and
the common actions reached by keys, slash commands and the palette. Session management lives in
``SessionActions`` (``sessions.py``). Talks to the runtime only through the app's assistant
(``macaron_local.facade``); any MacaronError becomes a notification, never a traceback.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from macaron_local.errors import MacaronError, TurnError
from macaron_local.facade import SPECIALISTS, TurnItem
from macaron_local.genui.actions import turn_text
from macaron_local.tui.commands import PINS, parse
from macaron_local.tui.errors import report
from macaron_local.tui.screens.ask import AskScreen
from macaron_local.tui.screens.chat_sessions import SessionActions
from macaron_local.tui.widgets.genui import GenUIView
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.messages import AssistantMessage, Note, UserMessage, code_blocks
from macaron_local.tui.widgets.prompt import PromptInput
from macaron_local.tui.widgets.sidebar import Sidebar

Mode = Literal["new", "retry", "edit"]
CANCELLED = "Cancelled: the turn was rolled back; nothing was saved."


@dataclass
class TurnJob:
    """One running turn."""

    mode: Mode
    text: str
    label: str | None
    session_id: str
    cancel: threading.Event = field(default_factory=threading.Event)


class ChatScreen(SessionActions, Screen[None]):
    """The main screen."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel turn", id="chat.cancel"),
        Binding("ctrl+r", "retry", "Retry", id="chat.retry"),
        Binding("ctrl+o", "edit_last", "Edit last", id="chat.edit_last"),
        Binding("ctrl+n", "new_session", "New", id="chat.new_session"),
        Binding("ctrl+f", "search", "Search", id="chat.search"),
        Binding("ctrl+t", "toggle_timings", "Timings", id="chat.toggle_timings"),
        Binding("f4", "toggle_inspector", "Inspector", id="chat.toggle_inspector"),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar", show=False, id="chat.toggle_sidebar"),
        Binding("f5", "copy", "Copy code", id="chat.copy"),
        Binding("ctrl+up", "select(-1)", "Previous answer", show=False, id="chat.select_prev"),
        Binding("ctrl+down", "select(1)", "Next answer", show=False, id="chat.select_next"),
        Binding("ctrl+l", "focus_prompt", "Input", show=False, id="chat.focus_prompt"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.session_id: str | None = None
        self.pin: str | None = None
        self.job: TurnJob | None = None
        self.editing = False
        self.selected: AssistantMessage | None = None
        self._load_reported = False

    def compose(self) -> ComposeResult:
        settings = self.app.settings  # type: ignore[attr-defined]
        yield Header()
        with Horizontal(id="body"):
            yield Sidebar(id="sidebar", classes="" if settings.show_sidebar else "-hidden")
            with Vertical(id="main"):
                yield VerticalScroll(id="chat", classes="-timings" if settings.show_timings
                                     else "")
                yield Static("", id="status", markup=False)
                yield PromptInput(id="prompt", history_size=settings.history_size)
            yield Inspector(id="inspector",
                            classes="" if settings.show_inspector else "-hidden")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one(PromptInput).focus()
        self.query_one("#chat", VerticalScroll).anchor()
        self.set_interval(0.25, self.poll_status)
        self.poll_status()
        await self.refresh_sessions()

    @property
    def assistant(self):  # noqa: ANN201 - the app's AssistantProtocol
        return self.app.assistant  # type: ignore[attr-defined]

    # --- status ----------------------------------------------------------------------------

    def poll_status(self) -> None:
        a = self.assistant
        parts = [a.status]
        if self.pin:
            parts.append(f"pinned to {self.pin} {SPECIALISTS[self.pin]} (/auto to route)")
        if self.editing:
            parts.append("editing the last message (Enter sends a new branch)")
        if self.job is not None:
            parts.append("answering… Esc cancels")
        self.query_one("#status", Static).update(" · ".join(parts))
        if a.load_error is not None and not self._load_reported:
            self._load_reported = True
            report(self.app, a.load_error)

    # --- input -----------------------------------------------------------------------------

    @on(PromptInput.Submitted)
    async def submitted(self, event: PromptInput.Submitted) -> None:
        slash = parse(event.text)
        if slash is not None:
            await self.run_slash(slash.name, slash.arg)
            return
        text = event.text[1:] if event.text.startswith("//") else event.text
        mode: Mode = "edit" if self.editing else "new"
        self.editing = False
        await self.start_turn(mode, text, self.pin)

    async def run_slash(self, name: str, arg: str) -> None:
        if name in PINS:
            if arg:
                await self.start_turn("new", arg, PINS[name])
            else:
                self.pin = PINS[name]
                self.notify(f"Turns go to {self.pin} {SPECIALISTS[self.pin]} until /auto.")
            return
        if name == "edit" and arg:
            await self.start_turn("edit", arg, self.pin)
            return
        actions = {
            "auto": self.action_auto, "new": lambda: self.action_new_session(arg),
            "rename": lambda: self.rename(arg), "delete": self.action_delete_session,
            "undo": self.action_undo_delete, "export": lambda: self.export(arg),
            "import": lambda: self.import_file(arg), "retry": self.action_retry,
            "edit": self.action_edit_last, "copy": self.action_copy,
            "good": lambda: self.feedback("up"), "bad": lambda: self.feedback("down"),
            "correct": lambda: self.feedback("correction", arg),
            "timings": self.action_toggle_timings, "inspector": self.action_toggle_inspector,
            "profiles": lambda: self.app.run_action("profiles"),
            "settings": lambda: self.app.run_action("settings"),
            "theme": lambda: self.app.run_action("toggle_theme"),
            "help": lambda: self.app.run_action("help"), "quit": self.app.exit,
        }
        action = actions.get(name)
        if action is None:
            self.notify(f"Unknown command /{name}. Type /help for the list.", severity="warning")
            return
        result = action()
        if hasattr(result, "__await__"):
            await result

    def action_auto(self) -> None:
        self.pin = None
        self.notify("The router chooses the specialist again.")

    def action_focus_prompt(self) -> None:
        self.query_one(PromptInput).focus()

    # --- turns -----------------------------------------------------------------------------

    async def start_turn(self, mode: Mode, text: str, label: str | None) -> None:
        if self.job is not None:
            self.notify("A turn is still running; press Esc to cancel it first.",
                        severity="warning")
            return
        try:
            if self.session_id is None:
                await self.open_session(self.assistant.create_session(text[:60]).id)
        except MacaronError as exc:
            report(self.app, exc)
            return
        chat = self.query_one("#chat", VerticalScroll)
        if mode != "new":
            await self._drop_last(keep_user=mode == "retry")
        if mode != "retry":
            await chat.mount(UserMessage(text))
        widget = AssistantMessage()
        await chat.mount(widget)
        chat.scroll_end(animate=False)
        self.job = TurnJob(mode, text, label, self.session_id or "")
        self.poll_status()
        self.turn_worker(widget, self.job)

    async def _drop_last(self, *, keep_user: bool) -> None:
        answers = list(self.query(AssistantMessage))
        users = list(self.query(UserMessage))
        if answers:
            await answers[-1].remove()
        if users and not keep_user:
            await users[-1].remove()

    @work(thread=True, exclusive=True, group="turn", exit_on_error=False)
    def turn_worker(self, widget: AssistantMessage, job: TurnJob) -> None:
        kwargs = {
            "label": job.label, "cancel": job.cancel,
            "on_route": lambda lb, kind: widget.post_message(AssistantMessage.Routed(lb, kind)),
            "on_text": lambda piece: widget.post_message(AssistantMessage.Piece(piece)),
        }
        try:
            if job.mode == "retry":
                item = self.assistant.retry(job.session_id, **kwargs)
            elif job.mode == "edit":
                item = self.assistant.edit_last(job.session_id, job.text, **kwargs)
            else:
                item = self.assistant.run_turn(job.session_id, job.text, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a notice
            widget.post_message(AssistantMessage.Final(None, exc))
            return
        widget.post_message(AssistantMessage.Final(item))

    @on(AssistantMessage.Finished)
    async def turn_finished(self, event: AssistantMessage.Finished) -> None:
        job, self.job = self.job, None
        if event.item is not None:
            self.select(event.widget)
            await self.refresh_sessions()
        else:
            await self._turn_failed(job, event.error)
        self.poll_status()

    async def _turn_failed(self, job: TurnJob | None, error: Exception | None) -> None:
        cancelled = job is not None and job.cancel.is_set()
        await self.show_history()
        chat = self.query_one("#chat", VerticalScroll)
        if cancelled:
            await chat.mount(Note(CANCELLED))
            self.notify(CANCELLED, title="Turn cancelled")
            prompt = self.query_one(PromptInput)
            if job is not None and job.mode != "retry" and not prompt.text:
                prompt.load_text(job.text)
        else:
            await chat.mount(Note(f"The turn failed and was rolled back: {error}"))
            report(self.app, error if error is not None else TurnError("the turn failed"))
        chat.scroll_end(animate=False)

    def action_cancel(self) -> None:
        if self.job is None:
            if self.editing:
                self.editing = False
                self.poll_status()
            return
        self.job.cancel.set()
        self.query_one("#status", Static).update("cancelling…")

    async def action_retry(self) -> None:
        if self._has_turn():
            await self.start_turn("retry", "", self.pin)

    def action_edit_last(self) -> None:
        users = list(self.query(UserMessage))
        if not self._has_turn() or not users:
            return
        prompt = self.query_one(PromptInput)
        prompt.load_text(users[-1].text)
        prompt.focus()
        self.editing = True
        self.poll_status()

    def _has_turn(self) -> bool:
        if self.session_id is None or not self.query(AssistantMessage):
            self.notify("There is no answer to retry or edit yet.", severity="warning")
            return False
        return True

    # --- history and selection -------------------------------------------------------------

    async def show_history(self, focus_turn: str | None = None) -> None:
        chat = self.query_one("#chat", VerticalScroll)
        await chat.remove_children()
        self.selected = None
        items: list[TurnItem] = []
        if self.session_id is not None:
            try:
                items = self.assistant.history(self.session_id)
            except MacaronError as exc:
                report(self.app, exc)
        widgets = []
        for item in items:
            widgets += [UserMessage(item.request), AssistantMessage(item)]
        await chat.mount_all(widgets)
        answers = list(self.query(AssistantMessage))
        target = next((w for w in answers if w.item and w.item.id == focus_turn), None)
        if target or answers:
            self.select(target or answers[-1], scroll=target is not None)
        else:
            self.query_one(Inspector).show(None)
        if target is None:
            chat.scroll_end(animate=False)

    @on(AssistantMessage.Selected)
    def selected_message(self, event: AssistantMessage.Selected) -> None:
        self.select(event.widget)

    def select(self, widget: AssistantMessage, *, scroll: bool = False) -> None:
        if self.selected is not None and self.selected is not widget:
            self.selected.remove_class("-selected")
        self.selected = widget
        widget.add_class("-selected")
        if scroll:
            widget.scroll_visible(animate=False)
        self.query_one(Inspector).show(self._fresh(widget.item))

    def _fresh(self, item: TurnItem | None) -> TurnItem | None:
        """Re-read the turn so the inspector shows a summary written since."""
        if item is None or item.summary is not None:
            return item
        try:
            found = [t for t in self.assistant.history(item.session_id) if t.id == item.id]
        except MacaronError:
            return item
        return found[0] if found else item

    def action_select(self, step: int) -> None:
        answers = list(self.query(AssistantMessage))
        if not answers:
            return
        at = answers.index(self.selected) if self.selected in answers else len(answers)
        answers[max(0, min(len(answers) - 1, at + step))].focus()

    def target(self) -> AssistantMessage | None:
        """The answer actions apply to: the selected one, else the last."""
        answers = [w for w in self.query(AssistantMessage) if w.item is not None]
        if self.selected in answers:
            return self.selected
        return answers[-1] if answers else None

    # --- answer actions --------------------------------------------------------------------

    def action_copy(self) -> None:
        widget = self.target()
        if widget is None:
            self.notify("There is no answer to copy yet.", severity="warning")
            return
        blocks = code_blocks(widget.text)
        self.app.copy_to_clipboard("\n\n".join(blocks) if blocks else widget.text)
        what = f"{len(blocks)} code block(s)" if blocks else "the answer"
        self.notify(f"Copied {what} to the clipboard.")

    def action_feedback(self, kind: str) -> None:
        self.feedback(kind)

    def action_correct(self) -> None:
        widget = self.target()
        if widget is None:
            self.notify("There is no answer to correct yet.", severity="warning")
            return
        self.app.push_screen(AskScreen("A better answer:", widget.text),
                             lambda text: self.feedback("correction", text or "") if text else None)

    def feedback(self, kind: str, correction: str = "") -> None:
        widget = self.target()
        if widget is None or widget.item is None:
            self.notify("There is no answer to rate yet.", severity="warning")
            return
        if kind == "correction" and not correction:
            self.notify("Write the better answer after /correct.", severity="warning")
            return
        try:
            outcome = self.assistant.feedback(widget.item.id, kind, correction or None)
        except MacaronError as exc:
            report(self.app, exc)
            return
        self.notify(("Feedback kept. " if outcome.kept else "Feedback ") + outcome.message)

    # --- generated UIs (L3) --------------------------------------------------------------------

    @on(GenUIView.ActionRaised)
    async def ui_action(self, event: GenUIView.ActionRaised) -> None:
        """Local actions are done by the view; ``send`` is a new L3 turn; tools go to the
        assistant's ``ui_tool`` when it has one. ``turn_text`` leaves NoAI values out."""
        action, doc = event.action, event.view.document
        if doc is None or action.execution.kind == "local":
            return
        if action.execution.kind == "model":
            await self.start_turn("new", turn_text(action, doc), "L3")
            return
        run = getattr(self.assistant, "ui_tool", None)
        if run is None or self.session_id is None:
            self.notify("This assistant cannot run tools from a generated UI yet.",
                        severity="warning")
            return
        self.ui_tool_worker(run, self.session_id, action, doc)

    @work(thread=True, group="ui-tool", exit_on_error=False)
    def ui_tool_worker(self, run, session_id: str, action, doc) -> None:  # noqa: ANN001
        try:
            result = run(session_id, action, doc)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a notice
            self.app.call_from_thread(report, self.app, exc)
            return
        self.app.call_from_thread(self.notify, f"{action.execution.tool}: {result}"[:300])

    def action_toggle_timings(self) -> None:
        self.query_one("#chat").toggle_class("-timings")

    def action_toggle_inspector(self) -> None:
        self.query_one(Inspector).toggle_class("-hidden")

    def action_toggle_sidebar(self) -> None:
        self.query_one(Sidebar).toggle_class("-hidden")
