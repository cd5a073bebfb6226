"""The first-run notice about experience logging: a banner above the chat, not a modal.

Shown while the user has never chosen (``ExperienceStatus.choice`` is None). It never takes the
input's keys: the input keeps the focus, Enter there sends the message, and the choice is made
only deliberately, with the banner's buttons (Tab to them, or click) or its keys (F9 keeps
experience, F10 is "Not now"). It posts ``Chosen``; the app stores the choice.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Label, Static

from macaron_local.facade import EXPLAINER

KEEP_KEY, NOT_NOW_KEY = "f9", "f10"


class ExperienceBanner(Vertical):
    """What experience logging keeps, with "Keep experience" and "Not now"."""

    DEFAULT_CSS = """
    ExperienceBanner { height: auto; max-height: 50%; padding: 0 1; margin: 0 0 1 0;
        border: round $accent; background: $surface; }
    ExperienceBanner #explainer-text { height: auto; max-height: 12; overflow-y: auto; }
    ExperienceBanner .title { text-style: bold; }
    ExperienceBanner Horizontal { height: auto; }
    ExperienceBanner Button { margin: 0 2 0 0; min-width: 14; }
    """

    BINDINGS = [Binding("escape", "choose(False)", "Not now", id="explainer.not_now")]

    class Chosen(Message):
        """The user chose: ``keep`` True keeps experience for learning."""

        def __init__(self, keep: bool) -> None:
            super().__init__()
            self.keep = keep

    def compose(self) -> ComposeResult:
        yield Label(
            f"Learning from your chats · {KEEP_KEY.upper()} keep experience · "
            f"{NOT_NOW_KEY.upper()} not now",
            classes="title",
            markup=False,
        )
        yield Static(EXPLAINER, id="explainer-text", markup=False)
        yield Static("You can change this at any time in Settings (F3).", classes="dim")
        with Horizontal():
            yield Button("Not now", id="not-now", compact=True)
            yield Button("Keep experience", variant="primary", id="keep", compact=True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose(event.button.id == "keep")

    def action_choose(self, keep: bool) -> None:
        self.post_message(self.Chosen(keep))
