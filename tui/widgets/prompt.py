"""The message input: multi-line, Enter sends, Ctrl+J (or Shift+Enter) breaks the line.

Up on the first line and Down on the last walk the history of sent messages; with text typed,
only the messages that start with it (a prefix search). Up on an empty input while messages are
queued posts ``TakeBack`` instead (the screen gives the newest queued one back). A ``/word``
being typed posts ``Completions`` (the slash commands it may become) and Tab completes it.
Posts ``PromptInput.Submitted``; knows nothing about turns or the assistant.
"""

from __future__ import annotations

from collections.abc import Iterable

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

    class Completions(Message):
        """The slash commands the ``/word`` being typed may become (empty: none, or done)."""

        def __init__(self, names: list[str]) -> None:
            super().__init__()
            self.names = names

    def __init__(
        self,
        *,
        history_size: int = 200,
        commands: Iterable[str] = (),
        id: str | None = None,
    ) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.commands = sorted(commands)
        self.sent: list[str] = []
        self.history_size = history_size
        self._at: int | None = None  # index while walking the history
        self._draft = ""
        self._shown = ""  # what the history walk put in the input
        self.queued = 0  # messages waiting behind the running turn (set by the screen)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key == "tab" and self.complete():
            event.stop()
            event.prevent_default()
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def matches(self) -> list[str]:
        """The commands the text may become while it is a lone ``/word`` (``//`` escapes)."""
        text = self.text
        if not text.startswith("/") or text.startswith("//") or any(c.isspace() for c in text):
            return []
        return [name for name in self.commands if name.startswith(text[1:].lower())]

    def complete(self) -> bool:
        """Tab: complete a ``/word`` to its command (or the longest common start of several)."""
        found = self.matches()
        if not found:
            return False
        common = found[0] if len(found) == 1 else _common_start(found)
        text = f"/{common} " if len(found) == 1 else f"/{common}"
        if text != self.text:
            self.load_text(text)
            self.move_cursor(self.document.end)
        return True

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._at is not None and self.text != self._shown:
            self._at = None  # the user edited: the next Up searches for what is typed now
        found = self.matches()
        self.post_message(self.Completions([] if found == [self.text[1:]] else found))

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
        """One step through the history; with a draft typed, only entries starting with it."""
        if self._at is None:
            self._draft, self._at = self.text, len(self.sent)
        at = self._at + step
        while 0 <= at < len(self.sent) and not self.sent[at].startswith(self._draft):
            at += step
        if at < 0:
            return  # nothing older matches: stay where we are
        self._at = min(len(self.sent), at)
        text = self._draft if self._at == len(self.sent) else self.sent[self._at]
        if self._at == len(self.sent):
            self._at = None
        self._shown = text
        self.load_text(text)
        self.move_cursor(self.document.end)


def _common_start(words: list[str]) -> str:
    first, last = min(words), max(words)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
