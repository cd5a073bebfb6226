"""The first-run explainer: what experience logging keeps, and the user's choice about it.

Shown once, while the user has never chosen (``ExperienceStatus.choice`` is None). It only
returns the choice; the app stores it through the facade. Esc means "Not now".
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from macaron_local.facade import EXPLAINER


class ExplainerScreen(ModalScreen[bool]):
    """Returns True for "Keep experience", False for "Not now" (or Esc)."""

    BINDINGS = [Binding("escape", "not_now", "Not now", id="explainer.not_now")]

    def compose(self) -> ComposeResult:
        with Vertical(id="explainer"):
            yield Label("Learning from your chats", classes="title")
            yield Static(EXPLAINER, id="explainer-text", markup=False)
            yield Static("You can change this at any time in Settings (F3).", classes="dim")
            with Horizontal(id="explainer-buttons"):
                yield Button("Not now", id="not-now")
                yield Button("Keep experience", variant="primary", id="keep")

    def on_mount(self) -> None:
        # Enter on the default answer must never opt anyone in by accident
        self.query_one("#not-now", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "keep")

    def action_not_now(self) -> None:
        self.dismiss(False)
