"""Chat entries: the user's message, the assistant's streamed answer with its badge, notes.

An ``AssistantMessage`` receives its stream as messages (thread-safe ``post_message`` from the
turn worker): ``Routed`` sets the badge, ``Piece`` appends Markdown, ``Final`` ends it and is
passed up as ``AssistantMessage.Finished`` for the screen. Focusing one posts ``Selected``.
``Noticed`` carries a remote notice: after a failover the streamed remote text is cleared (the
local rerun replaces it) and the notice goes up as ``Told`` for the screen to show.
An L3 answer's ui block is parsed as it streams and rendered as live widgets (``GenUIView``):
each component appears as soon as its JSON is complete; the prose before it stays Markdown.
An agent answer shows its tool steps (``ToolSteps``, folded) above the answer, from the turn's
record: for history at once, for a new turn when it is final.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from macaron_local.facade import TurnItem, badge
from macaron_local.genui.catalogue import Catalogue
from macaron_local.genui.stream import ComponentReady, DocumentReady, Prose, UiStream, split_answer
from macaron_local.tui.widgets.genui import GenUIView
from macaron_local.tui.widgets.toolsteps import ToolSteps

if TYPE_CHECKING:
    from macaron_local.remote.hybrid import Notice

RENDER_EVERY_S = 0.2  # while streaming, the answer's Markdown is rendered at most this often
TYPING_S = 0.3  # a key this recent means the user is typing: renders wait until a pause
MAX_DEFER_S = 2.0  # ...but streamed text is never held back longer than this
FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)


def code_blocks(markdown: str) -> list[str]:
    """The contents of the fenced code blocks in ``markdown`` (an open last fence counts)."""
    return [m.group(1).rstrip("\n") for m in FENCE.finditer(markdown)]


def timings_line(item: TurnItem) -> str:
    t, k = item.timings, item.tokens
    parts = [
        f"{name} {t[key]:.0f} ms"
        for name, key in (
            ("route", "route_ms"),
            ("first token", "ttft_ms"),
            ("answer", "answer_ms"),
            ("total", "total_ms"),
        )
        if key in t
    ]
    toks = (
        f"{k.get('prompt', 0)} prompt ({k.get('cached', 0)} cached) · "
        f"{k.get('completion', 0)} generated"
    )
    return " · ".join(parts) + " · " + toks


class UserMessage(Static):
    """What the user sent."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False, classes="user")
        self.text = text


class QueuedMessage(Static):
    """A message sent while a turn runs: shown as queued until that turn ends."""

    def __init__(self, text: str) -> None:
        super().__init__(f"queued · {text}", markup=False, classes="user -queued")
        self.text = text  # as typed (a one-turn pin kept)


class Note(Static):
    """A line from the app itself (cancelled turns, errors): not part of the conversation."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False, classes="note")


class AssistantMessage(Vertical, can_focus=True):
    """One assistant turn: badge, tool steps (folded), Markdown answer, hop timings (on demand)."""

    BINDINGS = [
        Binding("c", "screen.copy", "Copy code", id="answer.copy"),
        Binding("plus,equals_sign", "screen.feedback('up')", "Good", id="answer.good"),
        Binding("minus", "screen.feedback('down')", "Bad", id="answer.bad"),
        Binding("x", "screen.correct", "Correct it", id="answer.correct"),
        Binding("left_square_bracket", "screen.branch(-1)", "Previous branch", id="answer.prev"),
        Binding("right_square_bracket", "screen.branch(1)", "Next branch", id="answer.next"),
    ]

    class Routed(Message, bubble=False):
        def __init__(self, label: str, kind: str) -> None:
            super().__init__()
            self.label, self.kind = label, kind

    class Piece(Message, bubble=False):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Noticed(Message, bubble=False):
        def __init__(self, notice: Notice) -> None:
            super().__init__()
            self.notice = notice

    class Told(Message):
        """A remote notice for the screen to show (the widget has already reacted)."""

        def __init__(self, widget: AssistantMessage, notice: Notice) -> None:
            super().__init__()
            self.widget, self.notice = widget, notice

    class Final(Message, bubble=False):
        def __init__(self, item: TurnItem | None, error: Exception | None = None) -> None:
            super().__init__()
            self.item, self.error = item, error

    class Finished(Message):
        """The stream ended: ``item`` when committed, else ``error`` (rolled back)."""

        def __init__(
            self, widget: AssistantMessage, item: TurnItem | None, error: Exception | None
        ) -> None:
            super().__init__()
            self.widget, self.item, self.error = widget, item, error

    class Selected(Message):
        def __init__(self, widget: AssistantMessage) -> None:
            super().__init__()
            self.widget = widget

    def __init__(
        self,
        item: TurnItem | None = None,
        *,
        remote: bool = False,
        ui_saved: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(classes="assistant")
        self.ui_saved = ui_saved  # a generated UI's kept state (restored in it)
        self.item = item
        self.remote = remote  # the user's /remote: this turn is meant for the remote server
        self._routed = ""  # the badge from the route, while streaming
        self.text = item.answer if item else ""
        self._stream: MarkdownStream | None = None
        self._unrendered: list[str] = []  # streamed text not rendered yet (see _write)
        self._render_timer: Timer | None = None
        self._typed_at = 0.0  # monotonic time of the user's last key in the input (typed())
        self._held_since = 0.0  # when the oldest unrendered text arrived
        self._ui: UiStream | None = None  # set while an L3 answer streams
        self.ui_view: GenUIView | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._badge_text(), classes="badge", markup=False)
        yield ToolSteps(self.item.tool_calls if self.item else (), classes="tool-steps")
        draws = self.item is not None and self._draws_ui(self.item.label)
        answer = split_answer(self.text, self._catalogue()) if draws else None
        if answer is not None and answer.document is not None:
            yield Markdown(answer.prose or None, classes="answer")
            self.ui_view = GenUIView(answer.document, turn_id=self.item.id, saved=self.ui_saved)
            yield self.ui_view
        else:
            yield Markdown(self.text or None, classes="answer")
        yield Static(timings_line(self.item) if self.item else "", classes="timings", markup=False)

    def _badge_text(self) -> str:
        if self.item is None:
            return "… thinking"
        it = self.item
        text = badge(
            it.label,
            it.route_kind,
            it.backend,
            it.failover_reason,
            name=self._specialist(it.label),
            failed_calls=it.failed_calls,
        )
        if self.item.branches > 1:
            text += f" · branch {self.item.branch}/{self.item.branches} ([ ] to browse)"
        return text

    def _specialist(self, label: str) -> str:
        """The specialist's name from the profile (the app's assistant), else none."""
        assistant = getattr(self.app, "assistant", None)
        return assistant.specialists().get(label, "") if assistant is not None else ""

    def _draws_ui(self, label: str) -> bool:
        """Whether ``label`` is the profile's GenUI specialist (its answers hold a ui block)."""
        assistant = getattr(self.app, "assistant", None)
        return assistant is not None and label == assistant.label_for("genui")

    def _catalogue(self) -> Catalogue | None:
        """The components generated UIs may use (the plugins' too), from the app's assistant."""
        assistant = getattr(self.app, "assistant", None)
        return assistant.ui_catalogue() if assistant is not None else None

    @property
    def badge_text(self) -> str:
        return str(self.query_one(".badge", Static).content)

    def on_focus(self) -> None:
        self.post_message(self.Selected(self))

    def on_assistant_message_routed(self, event: Routed) -> None:
        self._routed = badge(event.label, event.kind, name=self._specialist(event.label))
        where = "answering remotely…" if self.remote else "answering…"
        self.query_one(".badge", Static).update(f"{self._routed} · {where}")
        if self._draws_ui(event.label):
            self._ui = UiStream(self._catalogue())

    async def on_assistant_message_noticed(self, event: Noticed) -> None:
        notice = event.notice
        if notice.kind == "failover":
            await self._discard()
            why = f"remote failed: {notice.reason}" if notice.reason else "remote failed"
            self.query_one(".badge", Static).update(f"{self._routed} · {why} · answering locally…")
        self.post_message(self.Told(self, notice))

    async def _discard(self) -> None:
        """Clear the partial remote answer: the local rerun streams the whole answer again."""
        self._unrendered.clear()  # the remote text is void
        await self._stop_stream()
        if self._ui is not None:
            self._ui = UiStream(self._catalogue())
        if self.ui_view is not None:
            await self.ui_view.remove()
            self.ui_view = None
        self.text = ""
        await self.query_one(".answer", Markdown).update("")

    async def on_assistant_message_piece(self, event: Piece) -> None:
        self.text += event.text
        if self._ui is None:
            await self._write(event.text)
            return
        for ev in self._ui.feed(event.text):
            if isinstance(ev, Prose):
                await self._write(ev.text)
            elif isinstance(ev, ComponentReady):
                await (await self._ui_view()).add_component(ev.component)
            elif isinstance(ev, DocumentReady):
                (await self._ui_view()).finish(ev.document)

    async def _write(self, text: str) -> None:
        """Markdown is re-rendered at most every ``RENDER_EVERY_S``, not once per token: each
        render re-parses the last block and lays out the chat, and per token that cost made
        keystroke echo 4x slower while an answer streamed. While the user types, renders wait
        for a pause in the typing (``TYPING_S``), at most ``MAX_DEFER_S``: each render lays out
        the chat twice (~20 ms each on a busy machine) and a key arriving then waits for it."""
        if not self._unrendered:
            self._held_since = time.monotonic()
        self._unrendered.append(text)
        if self._render_timer is None:
            self._render_timer = self.set_timer(RENDER_EVERY_S, self._render_due)

    def typed(self) -> None:
        """The user typed into the input while this answer streams (the screen tells us)."""
        self._typed_at = time.monotonic()

    async def _render_due(self) -> None:
        """The render timer: while the user types, wait for a pause (up to ``MAX_DEFER_S``),
        else render now."""
        self._render_timer = None
        now = time.monotonic()
        if now - self._typed_at < TYPING_S and now - self._held_since < MAX_DEFER_S:
            self._render_timer = self.set_timer(RENDER_EVERY_S, self._render_due)
            return
        await self._render_pending()

    async def _render_pending(self) -> None:
        text = "".join(self._unrendered)
        self._unrendered.clear()
        if not text:
            return
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(".answer", Markdown))
        await self._stream.write(text)

    async def _stop_stream(self) -> None:
        """Render what is pending, then end the stream."""
        if self._render_timer is not None:
            self._render_timer.stop()
        await self._render_pending()
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    async def _ui_view(self) -> GenUIView:
        if self.ui_view is None:
            self.ui_view = GenUIView()
            await self.mount(self.ui_view, after=self.query_one(".answer", Markdown))
        return self.ui_view

    async def _settle_ui(self, answer_text: str) -> None:
        """The committed answer: keep the streamed UI if it matches, else rebuild or drop it."""
        answer = split_answer(answer_text, self._catalogue())
        view = self.ui_view
        if answer.document is None:
            if view is not None:
                await view.remove()
                self.ui_view = None
            await self.query_one(".answer", Markdown).update(answer_text)
            return
        await self.query_one(".answer", Markdown).update(answer.prose)
        if view is not None and view.components == list(answer.document.components):
            view.finish(answer.document)
            return
        if view is not None:
            await view.remove()
        self.ui_view = GenUIView(answer.document)
        await self.mount(self.ui_view, after=self.query_one(".answer", Markdown))

    async def on_assistant_message_final(self, event: Final) -> None:
        await self._stop_stream()
        if self._ui is not None:
            self._ui.close()
        if event.item is not None:
            self.item, self.text = event.item, event.item.answer
            if self._draws_ui(event.item.label):
                await self._settle_ui(self.text)
                if self.ui_view is not None:  # its submissions go back to this turn (sticky)
                    self.ui_view.turn_id = event.item.id
            else:
                await self.query_one(".answer", Markdown).update(self.text)
            self.query_one(".badge", Static).update(self._badge_text())
            await self.query_one(ToolSteps).show(event.item.tool_calls)
            self.query_one(".timings", Static).update(timings_line(event.item))
        self.post_message(self.Finished(self, event.item, event.error))
