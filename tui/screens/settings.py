"""The settings screen: edits ``settings.toml`` and applies the change at once."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Select, Switch

from macaron_local.errors import ContractError
from macaron_local.tui.errors import report
from macaron_local.tui.settings import Settings


def parse_keys(text: str) -> dict[str, str]:
    """``chat.retry=ctrl+r; app.help=f1`` -> {"chat.retry": "ctrl+r", "app.help": "f1"}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        bid, sep, keys = part.partition("=")
        if not sep or not bid.strip() or not keys.strip():
            raise ContractError(f"cannot read {part!r} as id=keys",
                                hint="write e.g. chat.retry=ctrl+r; app.help=f1")
        out[bid.strip()] = keys.strip()
    return out


def show_keys(keys: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in keys.items())


class SettingsScreen(Screen[None]):
    """A form over :class:`Settings`; Save writes the file and applies it."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="settings.back"),
        Binding("ctrl+s", "save", "Save", id="settings.save"),
    ]

    def compose(self) -> ComposeResult:
        s: Settings = self.app.settings  # type: ignore[attr-defined]
        yield Header()
        with VerticalScroll(id="settings-form"):
            yield Label("Theme")
            yield Select([("dark", "dark"), ("light", "light")], value=s.theme,
                         allow_blank=False, id="theme")
            for name, label in (("show_timings", "Show hop timings"),
                                ("show_inspector", "Show the inspector"),
                                ("show_sidebar", "Show the sessions sidebar")):
                with Horizontal(classes="switch-row"):
                    yield Switch(getattr(s, name), id=name)
                    yield Label(label)
            yield Label("Profile at start (empty: tall-local)")
            yield Input(s.profile or "", id="profile")
            yield Label("Export folder (empty: the current folder)")
            yield Input(str(s.export_dir or ""), id="export_dir")
            yield Label("Key overrides: id=keys; id=keys (ids are on the help screen, F1)")
            yield Input(show_keys(s.keys), id="keys")
            yield Button("Save", variant="primary", id="save")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "settings"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()

    def gather(self) -> Settings:
        current: Settings = self.app.settings  # type: ignore[attr-defined]
        export_dir = self.query_one("#export_dir", Input).value.strip()
        return current.model_copy(update={
            "theme": self.query_one("#theme", Select).value,
            "show_timings": self.query_one("#show_timings", Switch).value,
            "show_inspector": self.query_one("#show_inspector", Switch).value,
            "show_sidebar": self.query_one("#show_sidebar", Switch).value,
            "profile": self.query_one("#profile", Input).value.strip() or None,
            "export_dir": Path(export_dir) if export_dir else None,
            "keys": parse_keys(self.query_one("#keys", Input).value),
        })

    def action_save(self) -> None:
        try:
            settings = self.gather()
            path = self.app.apply_settings(settings, save=True)  # type: ignore[attr-defined]
        except ContractError as exc:
            report(self.app, exc)
            return
        except OSError as exc:
            report(self.app, ContractError(f"could not write the settings: {exc}"))
            return
        self.notify(f"Saved to {path}")
