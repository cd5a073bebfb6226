"""The help screen: every key (as remapped by the settings) and every slash command."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from macaron_local.tui.commands import COMMANDS


def key_rows(bindings: list[tuple[str, Binding]], keymap: dict[str, str]) -> list[tuple[str, ...]]:
    """(where, keys, what, id) for each binding that has an id, with the user's keys applied."""
    rows = []
    for where, b in bindings:
        if b.id is None:
            continue
        keys = keymap.get(b.id, b.key)
        rows.append((where, keys, b.description or b.action, b.id))
    return rows


class HelpScreen(ModalScreen[None]):
    """Keys and commands; Esc or F1 closes it."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close")]

    def __init__(self, bindings: list[tuple[str, Binding]], keymap: dict[str, str]) -> None:
        super().__init__()
        self.rows = key_rows(bindings, keymap)

    def compose(self) -> ComposeResult:
        keys = Table(title="Keys (remap in settings.toml under \\[keys] by id)", expand=True)
        for col in ("where", "keys", "does", "id"):
            keys.add_column(col)
        for row in self.rows:
            keys.add_row(*row)
        cmds = Table(title="Slash commands", expand=True)
        cmds.add_column("command")
        cmds.add_column("does")
        for name, what in COMMANDS.items():
            cmds.add_row(f"/{name}", what)
        with VerticalScroll(id="help"):
            yield Static(keys, id="help-keys")
            yield Static(cmds, id="help-commands")
            yield Static(
                "Enter sends · Ctrl+J adds a line · Up/Down walk the input history (what is "
                "typed is a prefix search) · Tab completes a /command · "
                "//text sends a message that starts with '/'",
                classes="dim",
            )

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
