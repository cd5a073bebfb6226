"""The refine screen: learn a new revision of one specialist from experience, in the background.

Starts a run through the facade (``start_refine``), then polls its handle on a timer, so the
UI never waits on it: the progress bar, the run's log, Cancel, and at the end the report
(promoted, or kept unpromoted with the gate's reasons; the gate's figures; the PNG plots). The
handle lives on the app, so leaving this screen leaves the run going and coming back shows it.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Label, Log, ProgressBar, Select, Static

from macaron_local.errors import MacaronError
from macaron_local.facade import RefineHandle, RefineOutcome, RefineProgress
from macaron_local.tui.errors import report

INTRO = (
    "Train a new revision of one specialist from the experience kept on this machine. "
    "It runs in the background at the lowest priority; the promotion gate decides whether "
    "it serves. Cancel stops after the current step and registers nothing (start the same "
    "run again to resume)."
)


def describe(p: RefineProgress) -> str:
    """The state line: ``L0 · step 3/40`` (``· cancelling…``, ``· done``, ``· failed``)."""
    state = (
        ("failed" if p.error else "done")
        if p.done
        else ("cancelling…" if p.cancelling else "running")
    )
    return f"{p.label} · step {p.step}/{p.total} · {state}"


def outcome_text(outcome: RefineOutcome) -> str:
    """The report as the screen shows it."""
    head = {"promoted": "Promoted", "kept": "Kept, not promoted", "cancelled": "Cancelled"}.get(
        outcome.status, outcome.status
    )
    lines = [f"{head}: {outcome.summary}"]
    lines += [f"  gate: {r}" for r in outcome.reasons]
    lines += [
        f"  {name}: {_num(before)} -> {_num(after)}" for name, before, after in outcome.figures
    ]
    if outcome.plots:
        lines.append("Plots: " + "  ".join(outcome.plots))
    if outcome.report_json:
        lines.append(f"Report: {outcome.report_json}")
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.4g}"


class RefineScreen(Screen[None]):
    """Pick a label, start, watch, cancel, read the report."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="refine.back"),
        Binding("ctrl+s", "start", "Start", id="refine.start"),
        Binding("ctrl+x", "cancel_run", "Cancel run", id="refine.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.shown_lines = 0
        self.finished = False
        self.starting = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="refine"):
            yield Static(INTRO, classes="dim", markup=False)
            with Horizontal(id="refine-controls"):
                names = self.app.assistant.specialists()  # type: ignore[attr-defined]
                yield Select(
                    [(f"{k} {v}", k) for k, v in names.items()],
                    value=next(iter(names)),
                    allow_blank=False,
                    id="refine-label",
                )
                yield Button("Start", variant="primary", id="refine-start")
                yield Button("Cancel run", variant="error", id="refine-cancel", disabled=True)
            yield ProgressBar(total=None, show_eta=False, id="refine-bar")
            yield Label("No run yet.", id="refine-state", markup=False)
            yield Log(id="refine-log", max_lines=2000)
            yield Static("", id="refine-result", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "refine"
        self.set_interval(0.25, self.poll)
        self.poll()

    @property
    def handle(self) -> RefineHandle | None:
        return self.app.refine_handle  # type: ignore[attr-defined, no-any-return]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "refine-start":
            self.action_start()
        elif event.button.id == "refine-cancel":
            self.action_cancel_run()

    def action_start(self) -> None:
        if self.starting or (self.handle is not None and not self.handle.progress().done):
            self.notify("A refine run is already going; cancel it first.", severity="warning")
            return
        label = str(self.query_one("#refine-label", Select).value)
        self.starting = True
        self.query_one("#refine-start", Button).disabled = True
        self.query_one("#refine-state", Label).update(f"{label} · starting…")
        self.start_worker(label)

    @work(thread=True, exclusive=True, group="refine-start", exit_on_error=False)
    def start_worker(self, label: str) -> None:
        """Starting imports torch and reads the profile: off the UI thread."""
        try:
            handle = self.app.assistant.start_refine(label)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - every failure becomes a notice
            self.app.call_from_thread(self._start_failed, exc)
            return
        self.app.call_from_thread(self._started, label, handle)

    def _start_failed(self, exc: Exception) -> None:
        self.starting = False
        self.query_one("#refine-start", Button).disabled = False
        self.query_one("#refine-state", Label).update("Not started.")
        report(self.app, exc)

    def _explain(self, label: str, error: str) -> str:
        """A run with nothing to learn while turns are kept means they have no feedback yet: say
        that (the runtime's hint says to opt in, misleading when experience is on)."""
        if "no experience to learn" not in error:
            return error
        try:
            status = self.app.assistant.experience_status()  # type: ignore[attr-defined]
        except MacaronError:
            return error
        kept = status.per_label.get(label, 0)
        if not status.on or not kept:
            return error
        return (
            f"{kept} {label} turn(s) are kept, but none has feedback to learn from yet: rate "
            "answers (+ / -) or correct them (x, /correct), then start again"
        )

    def _started(self, label: str, handle: RefineHandle) -> None:
        self.starting = False
        self.app.refine_handle = handle  # type: ignore[attr-defined]
        self.shown_lines, self.finished = 0, False
        self.query_one(Log).clear()
        self.query_one("#refine-result", Static).update("")
        self.notify(f"Refining {label} in the background.")
        self.poll()

    def action_cancel_run(self) -> None:
        handle = self.handle
        if handle is None or handle.progress().done:
            self.notify("No refine run is going.", severity="warning")
            return
        handle.cancel()
        self.notify("Cancelling: the run stops after the current step; nothing is registered.")
        self.poll()

    def poll(self) -> None:
        """Show what the handle says now (called by the timer; never blocks)."""
        handle = self.handle
        if handle is None or self.starting:
            return
        p = handle.progress()
        self.query_one(ProgressBar).update(total=max(p.total, 1), progress=p.step)
        self.query_one("#refine-state", Label).update(describe(p))
        new = p.lines[self.shown_lines :]
        if new:
            self.query_one(Log).write_lines(new)
            self.shown_lines += len(new)
        self.query_one("#refine-cancel", Button).disabled = p.done or p.cancelling
        self.query_one("#refine-start", Button).disabled = not p.done
        if p.done and not self.finished:
            self.finished = True
            self._show_end(handle, p)

    def _show_end(self, handle: RefineHandle, p: RefineProgress) -> None:
        result = self.query_one("#refine-result", Static)
        if p.error is not None:
            error = self._explain(p.label, p.error)
            result.update(f"The run failed: {error}")
            self.notify(f"Refine failed: {error}", severity="error", markup=False)
            return
        outcome = handle.report()
        if outcome is not None:
            result.update(outcome_text(outcome))
            self.notify(f"Refine {outcome.status}: {outcome.summary}", markup=False)
