"""The chat screen: sessions sidebar, the conversation, the input, the inspector.

Owns: turning the user's input into turns (each in a thread worker, cancellable with Esc) and
the common actions reached by keys, slash commands and the palette; ``/remote <text>`` sends
one turn to the remote server (or says how to configure one), and remote notices (a failover,
a wait) become notifications. Session management lives in
``SessionActions`` (``sessions.py``). Talks to the runtime only through the app's assistant
(``macaron_local.facade``); any MacaronError becomes a notification, never a traceback.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static, TextArea

from macaron_local.errors import MacaronError, TurnError
from macaron_local.facade import NO_REMOTE, TurnEvents, TurnItem, TurnRequest, split_remote
from macaron_local.genui.actions import turn_text
from macaron_local.tui.commands import COMMANDS, PINS, parse
from macaron_local.tui.errors import report
from macaron_local.tui.history import load_history, save_history
from macaron_local.tui.screens.ask import AskScreen
from macaron_local.tui.screens.chat_sessions import SessionActions
from macaron_local.tui.screens.confirm import ConfirmScreen, Questions, answer
from macaron_local.tui.widgets.banner import KEEP_KEY, NOT_NOW_KEY, ExperienceBanner
from macaron_local.tui.widgets.genui import GenUIView
from macaron_local.tui.widgets.inspector import Inspector
from macaron_local.tui.widgets.messages import (
    AssistantMessage,
    Note,
    QueuedMessage,
    UserMessage,
    code_blocks,
)
from macaron_local.tui.widgets.prompt import PromptInput
from macaron_local.tui.widgets.sidebar import Sidebar

Mode = Literal["new", "retry", "edit", "ui"]  # ui: a generated UI's submission (sticky L3)
CANCELLED = "Cancelled: the turn was rolled back; nothing was saved."
CONFIRM_TIMEOUT_S = 600.0  # a "Run tool?" question nobody answers is a no after this


@dataclass
class TurnJob:
    """One running turn."""

    mode: Mode
    text: str
    label: str | None
    session_id: str
    remote: bool = False  # the user's /remote: force the answer to the remote server
    cancel: threading.Event = field(default_factory=threading.Event)
    ui: tuple[Any, Any, str | None] | None = None  # (action, document, its turn) for mode "ui"


@dataclass
class QueuedTurn:
    """A message sent while a turn ran: it starts when that turn ends (Up takes it back)."""

    text: str
    label: str | None
    remote: bool
    widget: QueuedMessage


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
        Binding(KEEP_KEY, "experience(True)", "Keep experience", id="chat.keep_experience"),
        Binding(NOT_NOW_KEY, "experience(False)", "Not now", id="chat.not_now"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.session_id: str | None = None
        self.pin: str | None = None
        self.job: TurnJob | None = None
        self.streaming: AssistantMessage | None = None  # the answer of the running turn
        self.editing = False
        self.selected: AssistantMessage | None = None
        self._load_reported = False
        self.questions = Questions()  # yes/no questions the workers are waiting on
        self.queued: list[QueuedTurn] = []  # sent while a turn ran: each starts when it ends
        self._summary_polls = 0

    def compose(self) -> ComposeResult:
        settings = self.app.settings  # type: ignore[attr-defined]
        yield Header()
        with Horizontal(id="body"):
            yield Sidebar(id="sidebar", classes="" if settings.show_sidebar else "-hidden")
            with Vertical(id="main"):
                yield VerticalScroll(id="chat", classes="-timings" if settings.show_timings else "")
                yield Static("", id="status", markup=False)
                yield Static("", id="completions", markup=False)
                yield PromptInput(
                    id="prompt", history_size=settings.history_size, commands=COMMANDS
                )
            yield Inspector(id="inspector", classes="" if settings.show_inspector else "-hidden")
        yield Footer()

    async def on_mount(self) -> None:
        self.assistant.set_confirm(self.confirm_tool)
        prompt = self.query_one(PromptInput)
        history = self.app.history_file  # type: ignore[attr-defined]
        if history is not None:
            prompt.sent = load_history(history, prompt.history_size)
        prompt.focus()
        self.query_one("#chat", VerticalScroll).anchor()
        self.set_interval(0.25, self.poll_status)
        self.poll_status()
        await self.refresh_sessions()
        self.app.explain_experience()  # type: ignore[attr-defined]

    @property
    def assistant(self):  # noqa: ANN201 - the app's AssistantProtocol
        return self.app.assistant  # type: ignore[attr-defined]

    @property
    def names(self) -> dict[str, str]:
        """Each label's specialist name, from the profile."""
        return dict(self.assistant.specialists())

    # --- nothing typed is dropped ------------------------------------------------------------

    def on_screen_resume(self) -> None:
        """Back from any modal or screen: the input has the focus again."""
        self.action_focus_prompt()

    def on_key(self, event: events.Key) -> None:
        """A printable key typed while the focus is elsewhere (an answer, the session list,
        nothing at all during a screen change) goes to the input, unless it is a key the
        focused widget binds (``c`` copies on an answer)."""
        if not event.is_printable or event.character is None:
            return
        if isinstance(self.focused, TextArea | Input) or event.key in self.app.active_bindings:
            return
        event.stop()
        event.prevent_default()
        prompt = self.query_one(PromptInput)
        self.set_focus(prompt)
        prompt.insert(event.character)

    def show_explainer(self) -> None:
        """The first-run notice about experience logging, above the chat (not a modal)."""
        if not self.query(ExperienceBanner):
            self.query_one("#main").mount(ExperienceBanner(), before=0)
            self.refresh_bindings()

    @on(ExperienceBanner.Chosen)
    async def experience_chosen(self, event: ExperienceBanner.Chosen) -> None:
        await self.query_one(ExperienceBanner).remove()
        self.refresh_bindings()
        self.action_focus_prompt()
        self.app.set_experience(event.keep)  # type: ignore[attr-defined]

    def action_experience(self, keep: bool) -> None:
        self.query_one(ExperienceBanner).action_choose(keep)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "experience":  # its keys are there only while the banner is
            return bool(self.is_mounted and self.query(ExperienceBanner))
        return True

    # --- status ----------------------------------------------------------------------------

    def poll_status(self) -> None:
        """The one-line status; the key hint that matters now comes first, so a narrow chat
        never cuts it off."""
        a = self.assistant
        parts = []
        if self.job is not None:
            parts.append("answering… Esc cancels")
        if self.queued:
            parts.append(f"{len(self.queued)} queued (Up on an empty input takes one back)")
        parts.append(a.status)
        if self.pin:
            parts.append(f"pinned to {self.pin} {self.names.get(self.pin, '')} (/auto to route)")
        if self.editing:
            parts.append("editing the last message (Enter sends a new branch)")
        if self.not_learning:
            parts.append("not learning from this chat (/nolearn)")
        self._set_status(" · ".join(parts))
        self._summary_polls += 1
        if self._summary_polls % 8 == 0:  # every 2 s
            self._refresh_summary()
        if a.load_error is not None and not self._load_reported:
            self._load_reported = True
            report(self.app, a.load_error)

    def _set_status(self, text: str) -> None:
        """The status line is one row high: a new text needs no layout of the screen, and an
        unchanged one no refresh (it is polled 4 times a second; a layout per poll cost
        ~20 ms of the event loop, which keystrokes waited on)."""
        status = self.query_one("#status", Static)
        if str(status.content) != text:
            status.update(text, layout=False)

    # --- input -----------------------------------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def typed(self) -> None:
        """A key in the input while an answer streams: its renders wait for a pause."""
        if self.streaming is not None:
            self.streaming.typed()

    @on(PromptInput.Completions)
    def completions(self, event: PromptInput.Completions) -> None:
        """The slash commands a ``/word`` may become, above the input (Tab completes)."""
        hint = self.query_one("#completions", Static)
        names = event.names
        if not names:  # every key posts this: no layout of the screen unless the hint changes
            if hint.display:
                hint.display = False
            return
        hint.display = True
        if len(names) == 1:
            hint.update(f"Tab completes /{names[0]}: {COMMANDS[names[0]]}")
        else:
            hint.update("Tab completes: " + "  ".join(f"/{n}" for n in names))

    @on(PromptInput.Submitted)
    async def submitted(self, event: PromptInput.Submitted) -> None:
        history = self.app.history_file  # type: ignore[attr-defined]
        if history is not None:
            try:
                save_history(history, self.query_one(PromptInput).sent)
            except OSError as exc:  # a convenience: say so once, keep going
                self.notify(f"The input history is not kept: {exc}", severity="warning")
        text, forced = split_remote(event.text)
        if forced:
            await self.remote_turn(text)
            return
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
            label = self.assistant.label_for(PINS[name])
            if label is None:
                self.notify(f"This profile has no {PINS[name]} specialist.", severity="warning")
            elif arg:
                await self.start_turn("new", arg, label)
            else:
                self.pin = label
                self.notify(f"Turns go to {label} {self.names.get(label, '')} until /auto.")
            return
        if name == "edit" and arg:
            await self.start_turn("edit", arg, self.pin)
            return
        if name == "remote":
            await self.remote_turn(arg)
            return
        actions = {
            "auto": self.action_auto,
            "new": lambda: self.action_new_session(arg),
            "rename": lambda: self.rename(arg),
            "delete": self.action_delete_session,
            "undo": self.action_undo_delete,
            "export": lambda: self.export(arg),
            "import": lambda: self.import_file(arg),
            "retry": self.action_retry,
            "edit": self.action_edit_last,
            "copy": self.action_copy,
            "good": lambda: self.feedback("up"),
            "bad": lambda: self.feedback("down"),
            "correct": lambda: self.feedback("correction", arg),
            "nolearn": self.toggle_learning,
            "refine": lambda: self.app.run_action("refine"),
            "timings": self.action_toggle_timings,
            "inspector": self.action_toggle_inspector,
            "profiles": lambda: self.app.run_action("profiles"),
            "settings": lambda: self.app.run_action("settings"),
            "theme": lambda: self.app.run_action("toggle_theme"),
            "help": lambda: self.app.run_action("help"),
            "quit": self.app.exit,
        }
        action = actions.get(name)
        if action is None:
            self.notify(f"Unknown command /{name}. Type /help for the list.", severity="warning")
            return
        result = action()
        if hasattr(result, "__await__"):
            await result

    async def remote_turn(self, text: str) -> None:
        """``/remote <text>``: this one turn goes to the remote server, if one is configured;
        otherwise say how to configure one and keep the text in the input."""
        try:
            endpoint = self.assistant.remote_endpoint()
        except MacaronError as exc:
            report(self.app, exc)
            return
        if endpoint is None:
            self.notify(NO_REMOTE, title="No remote server", severity="warning", timeout=12)
            prompt = self.query_one(PromptInput)
            if text and not prompt.text:
                prompt.load_text(f"/remote {text}")
            return
        if not text:
            self.notify(
                f"The remote server is {endpoint}. Type /remote <message> to send one turn there.",
                title="Remote",
            )
            return
        await self.start_turn("new", text, self.pin, remote=True)

    def action_auto(self) -> None:
        self.pin = None
        self.notify("The router chooses the specialist again.")

    def action_focus_prompt(self) -> None:
        self.query_one(PromptInput).focus()

    # --- turns -----------------------------------------------------------------------------

    async def start_turn(
        self,
        mode: Mode,
        text: str,
        label: str | None,
        *,
        remote: bool = False,
        ui: tuple[Any, Any, str | None] | None = None,
    ) -> None:
        if self.job is not None:
            if mode == "new":
                await self._queue(text, label, remote)
            else:
                self.notify(
                    "A turn is still running; press Esc to cancel it first.", severity="warning"
                )
            return
        try:
            if self.session_id is None:
                sid = self.assistant.create_session(text[:60]).id
                if self.not_learning:  # /nolearn before the first message
                    self.assistant.exclude_session(sid, True)
                await self.open_session(sid)
        except MacaronError as exc:
            report(self.app, exc)
            return
        chat = self.query_one("#chat", VerticalScroll)
        if mode in ("retry", "edit"):
            await self._drop_last(keep_user=mode == "retry")
        widget = AssistantMessage(remote=remote)
        first_queued = next(iter(self.query(QueuedMessage)), None)  # new turns go above the queue
        await chat.mount_all(
            ([UserMessage(text)] if mode != "retry" else []) + [widget], before=first_queued
        )
        chat.scroll_end(animate=False)
        self.job = TurnJob(mode, text, label, self.session_id or "", remote=remote, ui=ui)
        self.streaming = widget
        self.poll_status()
        self.turn_worker(widget, self.job)

    async def _queue(self, text: str, label: str | None, remote: bool) -> None:
        widget = QueuedMessage(self._as_typed(text, label, remote))
        await self.query_one("#chat", VerticalScroll).mount(widget)
        widget.scroll_visible(animate=False)
        self.queued.append(QueuedTurn(text, label, remote, widget))
        self._sync_queue()

    def _sync_queue(self) -> None:
        self.query_one(PromptInput).queued = len(self.queued)
        self.poll_status()

    async def _next_queued(self) -> None:
        """The running turn ended well: the oldest queued message starts."""
        if self.job is not None or not self.queued:
            return
        item = self.queued.pop(0)
        await item.widget.remove()
        self._sync_queue()
        await self.start_turn("new", item.text, item.label, remote=item.remote)

    @on(PromptInput.TakeBack)
    async def take_back(self) -> None:
        """Up on an empty input: the newest queued message comes back into it, unsent."""
        if self.queued:
            item = self.queued.pop()
            await item.widget.remove()
            self._sync_queue()
            self.query_one(PromptInput).give_back(item.widget.text)

    async def _withdraw_queue(self) -> list[str]:
        """Every queued message, as typed, out of the queue (the turn before them failed)."""
        items, self.queued = self.queued, []
        for item in items:
            await item.widget.remove()
        self._sync_queue()
        return [item.widget.text for item in items]

    def _as_typed(self, text: str, label: str | None, remote: bool = False) -> str:
        """``text`` as the user would type it again: a one-turn pin or /remote kept."""
        if remote:
            return f"/remote {text}"
        if label is not None and label != self.pin:
            name = next(
                (k for k, role in PINS.items() if self.assistant.label_for(role) == label), None
            )
            if name is not None:
                return f"/{name} {text}"
        return f"//{text}" if text.startswith("/") else text

    async def _drop_last(self, *, keep_user: bool) -> None:
        answers = list(self.query(AssistantMessage))
        users = list(self.query(UserMessage))
        if answers:
            await answers[-1].remove()
        if users and not keep_user:
            await users[-1].remove()

    @work(thread=True, exclusive=True, group="turn", exit_on_error=False)
    def turn_worker(self, widget: AssistantMessage, job: TurnJob) -> None:
        events = TurnEvents(
            on_route=lambda r: widget.post_message(AssistantMessage.Routed(r.label, r.kind)),
            on_text=lambda piece: widget.post_message(AssistantMessage.Piece(piece)),
            on_notice=lambda notice: widget.post_message(AssistantMessage.Noticed(notice)),
            cancel=job.cancel,
        )
        try:
            if job.mode == "retry":
                item = self.assistant.retry(job.session_id, events, label=job.label)
            elif job.mode == "edit":
                item = self.assistant.edit_last(job.session_id, job.text, events, label=job.label)
            elif job.mode == "ui" and job.ui is not None:
                action, doc, turn_id = job.ui
                item = self.assistant.ui_send(job.session_id, action, doc, events, turn_id=turn_id)
            else:
                request = TurnRequest(job.session_id, job.text, label=job.label, remote=job.remote)
                item = self.assistant.run_turn(request, events)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a notice
            widget.post_message(AssistantMessage.Final(None, exc))
            return
        widget.post_message(AssistantMessage.Final(item))

    @on(AssistantMessage.Finished)
    async def turn_finished(self, event: AssistantMessage.Finished) -> None:
        job, self.job = self.job, None
        self.streaming = None
        if event.item is not None:
            self.select(event.widget)
            await self.refresh_sessions()
            await self._next_queued()
        else:
            await self._turn_failed(job, event.error)
        self.poll_status()

    @on(AssistantMessage.Told)
    def turn_notice(self, event: AssistantMessage.Told) -> None:
        """A turn notice (a remote failover: the turn reruns locally; a wait...); never blocks."""
        notice = event.notice
        titles = {"failover": "Remote failed", "waiting": "Remote busy", "local": "Local turn"}
        self.notify(
            str(notice),
            title=titles.get(notice.kind, notice.kind.capitalize()),
            severity="warning" if notice.kind == "failover" else "information",
        )

    async def _turn_failed(self, job: TurnJob | None, error: Exception | None) -> None:
        cancelled = job is not None and job.cancel.is_set()
        given = await self._withdraw_queue()  # what was queued behind it is not sent
        await self.show_history()
        chat = self.query_one("#chat", VerticalScroll)
        if job is not None and job.mode in ("new", "edit") and cancelled:
            given.insert(0, self._as_typed(job.text, job.label, job.remote))
        self.query_one(PromptInput).give_back(*given)
        if cancelled:
            await chat.mount(Note(CANCELLED))
            self.notify(CANCELLED, title="Turn cancelled")
        else:
            await chat.mount(Note(f"The turn failed and was rolled back: {error}"))
            report(self.app, error if error is not None else TurnError("the turn failed"))
        chat.scroll_end(animate=False)

    def action_cancel(self) -> None:
        if self.job is None:
            if self.close_overlays():
                return
            if self.editing:
                self.editing = False
                self.poll_status()
            return
        self.job.cancel.set()
        self.questions.decline_all()
        self._set_status("cancelling…")

    async def action_retry(self) -> None:
        if self._has_turn():
            await self.start_turn("retry", "", self.pin)

    def action_edit_last(self) -> None:
        users = list(self.query(UserMessage))
        if not self._has_turn() or not users:
            return
        prompt = self.query_one(PromptInput)
        prompt.load_text(users[-1].text)
        prompt.move_cursor(prompt.document.end)
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
        genui = self.assistant.label_for("genui")
        saved = self._ui_saved([i.id for i in items if i.label == genui])
        widgets = []
        for item in items:
            widgets += [
                UserMessage(item.request),
                AssistantMessage(item, ui_saved=saved.get(item.id)),
            ]
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

    def _refresh_summary(self) -> None:
        """The selected answer's summary is written in the background after its turn: once it
        is stored, the inspector shows it (it said "not written yet" until the next selection)."""
        widget = self.selected
        if widget is None or widget.item is None or widget.item.summary is not None:
            return
        fresh = self._fresh(widget.item)
        if fresh is not None and fresh.summary is not None:
            widget.item = fresh
            self.query_one(Inspector).show(fresh)

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

    async def action_branch(self, step: int) -> None:
        """``[`` / ``]`` on an answer: show its previous / next sibling (a retry or an edit);
        the store keeps the choice, so the next message and the next start continue it."""
        widget = self.target()
        if widget is None or widget.item is None or self.session_id is None:
            return
        if self.job is not None:
            self.notify("A turn is running; wait for it or press Esc first.", severity="warning")
            return
        try:
            shown = self.assistant.switch_branch(self.session_id, widget.item.id, step)
        except MacaronError as exc:
            report(self.app, exc)
            return
        if shown is None:
            self.notify(f"There is no {'earlier' if step < 0 else 'later'} branch here.")
            return
        await self.show_history(focus_turn=shown)
        found = [w for w in self.query(AssistantMessage) if w.item and w.item.id == shown]
        if found:
            found[0].focus()  # so the next [ or ] moves on from here

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
        self.app.push_screen(
            AskScreen("A better answer:", widget.text),
            lambda text: self.feedback("correction", text or "") if text else None,
        )

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
        title = "Feedback kept" if outcome.kept else "Feedback not kept"
        self.notify(
            outcome.message,
            title=title,
            markup=False,
            severity="information" if outcome.kept else "warning",
        )

    # --- generated UIs (L3) --------------------------------------------------------------------

    def _ui_saved(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not turn_ids:
            return {}
        try:
            return self.assistant.ui_states(turn_ids)  # type: ignore[no-any-return]
        except MacaronError as exc:
            report(self.app, exc)
            return {}

    def _keep_ui(self, event: GenUIView.ActionRaised) -> None:
        """Every gesture's result is kept with the session (values, and a form submitted with
        nothing to handle it, which is said as such)."""
        view, action = event.view, event.action
        if view.turn_id is None or view.document is None:
            return
        unhandled = action.execution.kind == "local" and action.origin.gesture == "submit"
        form = action.origin.component_id if unhandled else None
        try:
            n = self.assistant.save_ui_state(
                view.turn_id,
                view.document,
                view.read_state(),
                submitted=form,
                submitted_values=dict(action.state) if form else None,
            )
        except MacaronError as exc:
            report(self.app, exc)
            return
        if form is not None:
            view.show_submissions(n)
            self.notify(
                "Nothing handles this form (it has no action): its values are kept with this "
                f"chat, submission {n}.",
                title="Form kept",
                severity="warning",
            )

    @on(GenUIView.ActionRaised)
    async def ui_action(self, event: GenUIView.ActionRaised) -> None:
        """Local actions are done by the view; ``send`` is a new L3 turn; tools go to the
        assistant's ``ui_tool`` when it has one. ``turn_text`` leaves NoAI values out. Every
        gesture's state is kept with the session."""
        action, doc = event.action, event.view.document
        self._keep_ui(event)
        if doc is None or action.execution.kind == "local":
            return
        if action.execution.kind == "model":  # back to the turn that drew the UI (sticky)
            await self.start_turn(
                "ui", turn_text(action, doc), None, ui=(action, doc, event.turn_id)
            )
            return
        if self.session_id is None:
            return
        self.ui_tool_worker(self.assistant.ui_tool, self.session_id, action, doc)

    @work(thread=True, group="ui-tool", exit_on_error=False)
    def ui_tool_worker(self, run, session_id: str, action, doc) -> None:  # noqa: ANN001
        try:
            result = run(session_id, action, doc)
        except PermissionError as exc:  # declined, or no answer: said as such, not as a bug
            self.app.call_from_thread(
                self.notify, str(exc), title="Not run", severity="warning", markup=False
            )
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes a notice
            self.app.call_from_thread(report, self.app, exc)
            return
        self.app.call_from_thread(self.notify, f"{action.execution.tool}: {result}"[:300])

    class ConfirmAsked(Message):
        """A worker thread asks the user a yes/no question (see ``Questions``)."""

        def __init__(self, question: str, future: Future[bool]) -> None:
            super().__init__()
            self.question, self.future = question, future

    def confirm_tool(self, tool: str, args: dict[str, Any]) -> bool:
        """Asked on a worker thread before a side-effecting tool runs: the user answers in a
        modal. A cancelled turn or a closing app is a no; no answer within
        ``CONFIRM_TIMEOUT_S`` is a no that says so (PermissionError, which the tool gate hands
        to the model and a generated UI's tool shows as a notice)."""
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        question = f"Run {tool}({shown[:400]})?\nIt changes something outside this chat."
        future = self.questions.open()
        if future is None or not self.post_message(self.ConfirmAsked(question, future)):
            return False  # the screen is closing
        ok = self.questions.wait(future, CONFIRM_TIMEOUT_S)
        if ok is None:
            raise PermissionError(
                f"declined: no answer within {CONFIRM_TIMEOUT_S / 60:g} minutes, so {tool} "
                "did not run"
            )
        return ok

    @on(ConfirmAsked)
    def ask_user(self, event: ConfirmAsked) -> None:
        future = event.future
        if future.done():  # answered (no) before the dialog could open
            return
        dialog = ConfirmScreen(event.question, yes="Run")
        future.add_done_callback(lambda _f: dialog.withdraw())
        self.app.push_screen(dialog, callback=lambda ok: answer(future, bool(ok)))

    def on_unmount(self) -> None:
        """Closing: the running turn stops at its next token and open questions are a no, so
        no worker thread keeps the app from exiting."""
        if self.job is not None:
            self.job.cancel.set()
        self.questions.close()

    def action_toggle_timings(self) -> None:
        self.query_one("#chat").toggle_class("-timings")

    # --- panels: beside the chat when it fits, overlays on narrow terminals ------------------

    def _overlaid(self, panel: Sidebar | Inspector) -> bool:
        """Is ``panel`` an overlay at this width (the CSS hides it beside the chat)?"""
        if isinstance(panel, Sidebar):
            return self.has_class("-narrow")
        return self.has_class("-narrow") or self.has_class("-medium")

    def show_panel(self, panel: Sidebar | Inspector, show: bool | None = None) -> bool:
        """Show, hide or (``show`` None) toggle a panel; returns whether it is now shown. Beside
        the chat this is the ``-hidden`` flag the settings start with; as an overlay it is the
        overlay's own flag, so a resize back to a wide terminal finds the panels as they were."""
        if not self._overlaid(panel):
            shown = panel.has_class("-hidden") if show is None else show
            panel.set_class(not shown, "-hidden")
            return shown
        shown = not panel.has_class("-overlay") if show is None else show
        if shown:
            self.close_overlays()  # one overlay at a time
        panel.set_class(shown, "-overlay")
        if not shown:
            self.action_focus_prompt()
        return shown

    def close_overlays(self) -> bool:
        """Close an open overlay panel (Esc, picking a session); True when one was open."""
        opened = [p for p in self.query("#sidebar, #inspector") if p.has_class("-overlay")]
        for panel in opened:
            panel.remove_class("-overlay")
        if opened:
            self.action_focus_prompt()
        return bool(opened)

    def action_toggle_inspector(self) -> None:
        self.show_panel(self.query_one(Inspector))

    def action_toggle_sidebar(self) -> None:
        sidebar = self.query_one(Sidebar)
        if self.show_panel(sidebar) and self._overlaid(sidebar):
            sidebar.query_one("ListView").focus()
