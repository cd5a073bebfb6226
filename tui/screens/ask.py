"""A small modal that asks for one line of text (a title, a path, a correction)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class AskScreen(ModalScreen[str | None]):
    """Returns the text (Enter) or None (Esc)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel", id="ask.cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question, self.value, self.placeholder = question, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="ask"):
            yield Label(self.question, markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="ask-input")
            yield Label("Enter to confirm · Esc to cancel", classes="dim")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
