"""The settings screen: edits ``settings.toml`` and applies the change at once.

Also the experience section (docs/learning.md): what is kept, the opt-in switch (stored at once
through the facade, not in ``settings.toml``), what is kept now, and Purge (confirmed first).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Select, Static, Switch

from macaron_local.errors import ContractError, MacaronError
from macaron_local.facade import EXPLAINER, ExperienceStatus
from macaron_local.tui.errors import report
from macaron_local.tui.screens.confirm import ConfirmScreen
from macaron_local.tui.settings import Settings


def parse_keys(text: str) -> dict[str, str]:
    """``chat.retry=ctrl+r; app.help=f1`` -> {"chat.retry": "ctrl+r", "app.help": "f1"}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        bid, sep, keys = part.partition("=")
        if not sep or not bid.strip() or not keys.strip():
            raise ContractError(
                f"cannot read {part!r} as id=keys", hint="write e.g. chat.retry=ctrl+r; app.help=f1"
            )
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
            yield Select(
                [("dark", "dark"), ("light", "light")], value=s.theme, allow_blank=False, id="theme"
            )
            for name, label in (
                ("show_timings", "Show hop timings"),
                ("show_inspector", "Show the inspector"),
                ("show_sidebar", "Show the sessions sidebar"),
            ):
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
            yield from self.experience_section()
        yield Footer()

    def experience_section(self) -> ComposeResult:
        status = self.experience_status()
        yield Label("Experience (learning from your chats)", classes="section")
        yield Static(EXPLAINER, classes="dim", markup=False)
        with Horizontal(classes="switch-row"):
            yield Switch(status.on if status else False, id="experience")
            yield Label("Keep experience on this machine (applies at once)")
        yield Static(status.describe() if status else "", id="experience-status", markup=False)
        yield Button("Purge experience", variant="error", id="purge")

    def experience_status(self) -> ExperienceStatus | None:
        try:
            return self.app.assistant.experience_status()  # type: ignore[attr-defined, no-any-return]
        except MacaronError as exc:
            report(self.app, exc)
            return None

    def show_experience(self) -> None:
        status = self.experience_status()
        if status is not None:
            self.query_one("#experience-status", Static).update(status.describe())

    def on_switch_changed(self, event: Switch.Changed) -> None:
        if event.switch.id != "experience":
            return
        event.stop()
        status = self.experience_status()
        if status is None or status.on != event.value:
            self.app.set_experience(event.value)  # type: ignore[attr-defined]
        self.show_experience()

    def action_purge(self) -> None:
        self.app.push_screen(
            ConfirmScreen("Delete every kept turn and signal? This cannot be undone.", yes="Purge"),
            self._purge,
        )

    def _purge(self, yes: bool | None) -> None:
        if not yes:
            return
        try:
            removed = self.app.assistant.purge_experience()  # type: ignore[attr-defined]
        except MacaronError as exc:
            report(self.app, exc)
            return
        self.show_experience()
        self.notify(f"Purged the experience log ({removed} turns).", title="Experience")

    def on_mount(self) -> None:
        self.sub_title = "settings"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        elif event.button.id == "purge":
            self.action_purge()

    def gather(self) -> Settings:
        current: Settings = self.app.settings  # type: ignore[attr-defined]
        export_dir = self.query_one("#export_dir", Input).value.strip()
        return current.model_copy(
            update={
                "theme": self.query_one("#theme", Select).value,
                "show_timings": self.query_one("#show_timings", Switch).value,
                "show_inspector": self.query_one("#show_inspector", Switch).value,
                "show_sidebar": self.query_one("#show_sidebar", Switch).value,
                "profile": self.query_one("#profile", Input).value.strip() or None,
                "export_dir": Path(export_dir) if export_dir else None,
                "keys": parse_keys(self.query_one("#keys", Input).value),
            }
        )

    def action_save(self) -> None:
        try:
            settings = self.gather()
            path = self.app.apply_settings(settings, save=True)  # type: ignore[attr-defined]
            self.app.warn_key_conflicts(settings)  # type: ignore[attr-defined]
        except ContractError as exc:
            report(self.app, exc)
            return
        except OSError as exc:
            report(self.app, ContractError(f"could not write the settings: {exc}"))
            return
        self.notify(f"Saved to {path}")
