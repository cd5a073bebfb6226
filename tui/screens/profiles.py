"""Profiles and models: pick the harness profile; see the base model, adapter revisions,
validation errors and pending security approvals.

Reads through the assistant only; switching a profile reopens the runtime in a worker.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, ListItem, ListView, Static

from macaron_local.errors import MacaronError
from macaron_local.facade import ModelReport, ProfileReport
from macaron_local.tui.errors import report


def describe_profile(rep: ProfileReport, current: bool) -> Text:
    out = Text()
    out.append(f"{rep.name}", style="bold").append("  (in use)\n" if current else "\n")
    if rep.description:
        out.append(f"{rep.description}\n")
    if rep.content_hash:
        out.append("hash ", style="bold").append(f"{rep.content_hash[:16]}\n")
    if rep.errors:
        out.append("\nValidation errors\n", style="bold red")
        for err in rep.errors:
            out.append(f"  ✗ {err}\n", style="red")
    if rep.pending:
        out.append("\nSecurity changes waiting for approval\n", style="bold yellow")
        for change in rep.pending:
            out.append(f"  ! {change}\n", style="yellow")
        out.append(f"  approve with: macaron hcp approve {rep.name}\n", style="dim")
    if rep.ok:
        out.append("\n✓ valid, nothing waiting for approval\n", style="green")
    return out


def describe_model(model: ModelReport | None, status: str) -> Text:
    out = Text()
    out.append("\nBase model\n", style="bold")
    if model is None:
        return out.append(f"  {status}\n", style="dim")
    out.append(f"  {model.name} ({model.model_id})\n")
    out.append(
        f"  {model.quantization or 'unquantized'} · context {model.context_length} · "
        f"sha256 {model.sha256[:12]}\n"
    )
    out.append("\nAdapters (policy: which revision serves each label)\n", style="bold")
    for a in model.adapters:
        where = f"  {a.path}" if a.path else ""
        out.append(f"  {a.label}  {a.revision}{where}\n")
    for w in model.warnings:
        out.append(f"  ! {w}\n", style="yellow")
    return out


class ProfileRow(ListItem):
    def __init__(self, name: str, origin: str, current: bool) -> None:
        mark = "● " if current else "  "
        super().__init__(Label(f"{mark}{name}  [{origin}]", markup=False))
        self.name_ = name


class ProfilesScreen(Screen[None]):
    """Profiles on the left, details of the highlighted one and the model on the right."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="profiles.back"),
        Binding("u", "use", "Use this profile", id="profiles.use"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield ListView(id="profile-list")
            with VerticalScroll(id="profile-detail"):
                yield Static("", id="profile-report")
                yield Static("", id="model-report")
        yield Footer()

    @property
    def assistant(self):  # noqa: ANN201
        return self.app.assistant  # type: ignore[attr-defined]

    async def on_mount(self) -> None:
        self.sub_title = "profiles and models"
        view = self.query_one(ListView)
        current = self.assistant.profile_name
        try:
            items = self.assistant.profiles()
        except MacaronError as exc:
            report(self.app, exc)
            items = []
        await view.extend([ProfileRow(p.name, p.origin, p.name == current) for p in items])
        names = [p.name for p in items]
        view.index = names.index(current) if current in names else 0
        view.focus()
        self.show(current)

    def show(self, name: str) -> None:
        try:
            rep = self.assistant.check_profile(name)
        except MacaronError as exc:
            rep = ProfileReport(name, False, errors=(str(exc),))
        current = name == self.assistant.profile_name
        self.query_one("#profile-report", Static).update(describe_profile(rep, current))
        model = self.assistant.model_report() if current else None
        status = self.assistant.status if current else "used when this profile is picked"
        self.query_one("#model-report", Static).update(describe_model(model, status))

    def on_list_view_highlighted(self, event: ListView.Highlighted) -> None:
        if isinstance(event.item, ProfileRow):
            self.show(event.item.name_)

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        self.action_use()

    def action_use(self) -> None:
        row = self.query_one(ListView).highlighted_child
        if not isinstance(row, ProfileRow):
            return
        rep = self.assistant.check_profile(row.name_)
        if not rep.ok:
            self.notify(
                f"{row.name_} cannot be used until its errors are fixed and its "
                "changes approved (see the details).",
                severity="error",
            )
            return
        name = row.name_
        self.app.run_worker(
            lambda: self._switch(name), thread=True, group="profile", exit_on_error=False
        )
        self.notify(f"Loading {row.name_}… the status line shows when it is ready.")
        self.app.pop_screen()

    def _switch(self, name: str) -> None:
        try:
            self.assistant.switch_profile(name)
        except Exception as exc:  # noqa: BLE001 - becomes a notice
            self.app.call_from_thread(report, self.app, exc)
