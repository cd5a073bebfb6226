"""The message input: multi-line, Enter sends, Ctrl+J (or Shift+Enter) breaks the line.

Up on the first line and Down on the last walk the history of sent messages; Up on an empty
input while messages are queued posts ``TakeBack`` instead (the screen gives the newest queued
one back). Posts ``PromptInput.Submitted``; knows nothing about turns or the assistant.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("ctrl+j", "shift+enter")


class PromptInput(TextArea):
    """A TextArea that submits on Enter and keeps a history."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; }
    """

    class Submitted(Message):
        """The user sent ``text`` (already stripped, never empty)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class TakeBack(Message):
        """Up on an empty input while ``queued`` > 0: take the newest queued message back."""

    def __init__(self, *, history_size: int = 200, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.sent: list[str] = []
        self.history_size = history_size
        self._at: int | None = None  # index while walking the history
        self._draft = ""
        self.queued = 0  # messages waiting behind the running turn (set by the screen)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        self.remember(text)
        self.load_text("")
        self.post_message(self.Submitted(text))

    def remember(self, text: str) -> None:
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
        del self.sent[: max(0, len(self.sent) - self.history_size)]
        self._at = None

    def give_back(self, *texts: str) -> None:
        """Put ``texts`` (unsent messages) into the input after what is there, cursor at the
        end: nothing the user typed is lost."""
        parts = [t for t in (self.text.rstrip(), *texts) if t]
        if parts:
            self.load_text("\n\n".join(parts))
            self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        if not self.text and self.queued and not select:
            self.post_message(self.TakeBack())
            return
        if self.cursor_location[0] == 0 and not select and self.sent:
            self._walk(-1)
        else:
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if (
            self.cursor_location[0] == self.document.line_count - 1
            and not select
            and self._at is not None
        ):
            self._walk(+1)
        else:
            super().action_cursor_down(select)

    def _walk(self, step: int) -> None:
        if self._at is None:
            self._draft, self._at = self.text, len(self.sent)
        self._at = max(0, min(len(self.sent), self._at + step))
        text = self._draft if self._at == len(self.sent) else self.sent[self._at]
        if self._at == len(self.sent):
            self._at = None
        self.load_text(text)
        self.move_cursor(self.document.end)
