"""A small yes/no modal for actions that cannot be undone (purging experience)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmScreen(ModalScreen[bool]):
    """Returns True only when the user presses the confirming button; Esc is No."""

    BINDINGS = [Binding("escape", "no", "Cancel", id="confirm.no")]

    def __init__(self, question: str, yes: str = "Yes") -> None:
        super().__init__()
        self.question, self.yes = question, yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question, markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button("Cancel", id="no")
                yield Button(self.yes, variant="error", id="yes")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_no(self) -> None:
        self.dismiss(False)
