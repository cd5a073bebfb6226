"""What the app sees of learning after deployment: experience status and a refine run's handle.

Owns the small, typed values the facade hands to a UI (``ExperienceStatus``, ``RefineProgress``,
``RefineOutcome``), the ``RefineHandle`` protocol (what a UI may ask of a running refine), and
``JobHandle``, the handle over a real :class:`~macaron_local.refine.refine_loop.RefineJob`.
The work itself stays in :mod:`macaron_local.experience` and
:mod:`macaron_local.refine.refine_loop`. Must not:
import torch, textual or the TUI at import time (``start_job`` imports the loop when called).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from macaron_local.experience.settings import EXPLAINER as EXPLAINER  # for the app

if TYPE_CHECKING:
    from macaron_local.engine import Engine
    from macaron_local.refine.refine_loop import RefineConfig, RefineJob, RefineReport

NOT_KEPT = (
    "not kept: experience logging is off, so feedback is not stored. Turn it on in "
    "Settings (F3) or with `macaron experience on`."
)


@dataclass(frozen=True)
class ExperienceStatus:
    """Whether experience is kept and how much is: ``choice`` is the user's own (None: they
    never chose, so the app shows the explainer); ``on`` is what applies now."""

    choice: bool | None
    on: bool
    turns: int = 0
    per_label: dict[str, int] = field(default_factory=dict)
    signals: dict[str, int] = field(default_factory=dict)
    redactions: int = 0
    excluded_sessions: int = 0
    retention_days: int = 0

    def describe(self) -> str:
        """One line for Settings: ``on · 12 turns (L0 8, L2 4) · 3 signals ...``."""
        labels = ", ".join(f"{k} {v}" for k, v in sorted(self.per_label.items()))
        signals = ", ".join(f"{k} {v}" for k, v in sorted(self.signals.items()))
        kept = "until purged" if self.retention_days <= 0 else f"{self.retention_days} days"
        return (
            f"{'on' if self.on else 'off'} · {self.turns} turns kept"
            f"{f' ({labels})' if labels else ''} · signals: {signals or 'none'} · "
            f"{self.redactions} parts redacted · {self.excluded_sessions} chats excluded · "
            f"kept {kept}"
        )


@dataclass(frozen=True)
class RefineProgress:
    """A running refine: steps done of ``total``, the log so far, and whether it ended."""

    label: str
    step: int
    total: int
    lines: tuple[str, ...]
    done: bool
    cancelling: bool = False
    error: str | None = None


@dataclass(frozen=True)
class RefineOutcome:
    """How a refine run ended: ``status`` is promoted | kept | cancelled; ``figures`` are the
    gate metrics as (name, before, after); ``plots`` the PNG files of its report."""

    status: str
    summary: str
    revision: str | None = None
    reasons: tuple[str, ...] = ()
    figures: tuple[tuple[str, float | None, float | None], ...] = ()
    plots: tuple[str, ...] = ()
    report_json: str = ""


@runtime_checkable
class RefineHandle(Protocol):
    """A refine run in the background; every call returns at once."""

    def progress(self) -> RefineProgress: ...
    def cancel(self) -> None: ...
    def report(self) -> RefineOutcome | None: ...


def status_of(db: Any, profile: Any) -> ExperienceStatus:
    """The experience log's counts under ``profile`` plus the user's own choice."""
    from macaron_local.experience import status
    from macaron_local.experience.settings import user_choice

    s = status(db, profile)
    return ExperienceStatus(
        choice=user_choice(),
        on=bool(s["opt_in"]),
        turns=int(s["turns"]),
        per_label=dict(s["per_label"]),
        signals=dict(s["signals"]),
        redactions=int(s["redactions"]),
        excluded_sessions=int(s["excluded_sessions"]),
        retention_days=int(s["retention_days"]),
    )


def figures(report: RefineReport) -> tuple[tuple[str, float | None, float | None], ...]:
    """Every gate metric of a report as (``heldout.nll``, before, after)."""
    names = {
        (part, name)
        for side in (report.before, report.after)
        for part, metrics in side.items()
        for name in metrics
    }
    return tuple(
        (
            f"{part}.{name}",
            report.before.get(part, {}).get(name),
            report.after.get(part, {}).get(name),
        )
        for part, name in sorted(names)
    )


def outcome_of(report: RefineReport) -> RefineOutcome:
    return RefineOutcome(
        status=report.status,
        summary=report.summary,
        revision=report.revision,
        reasons=tuple(report.reasons),
        figures=figures(report),
        plots=tuple(report.plots),
        report_json=report.report_json,
    )


class JobHandle:
    """A :class:`RefineHandle` over a started :class:`RefineJob` (polled, never blocking)."""

    def __init__(self, job: RefineJob) -> None:
        self.job = job
        self._cancelled = False

    def progress(self) -> RefineProgress:
        step, total = self.job.progress
        error = self.job.error
        return RefineProgress(
            self.job.label,
            step,
            total,
            tuple(self.job.lines),
            done=self.done,
            cancelling=self._cancelled and not self.done,
            error=_say(error) if error is not None else None,
        )

    @property
    def done(self) -> bool:
        return self.job.report is not None or self.job.error is not None

    def cancel(self) -> None:
        self._cancelled = True
        self.job.cancel()

    def report(self) -> RefineOutcome | None:
        rep = self.job.report
        return outcome_of(rep) if rep is not None else None

    def join(self, timeout: float | None = None) -> RefineOutcome | None:
        """Wait for the run (tests and the CLI; the app polls instead)."""
        self.job.join(timeout)
        return self.report()


def _say(error: BaseException) -> str:
    hint = getattr(error, "hint", None)
    return f"{error} (hint: {hint})" if hint else str(error)


def start_job(
    label: str,
    *,
    profile: Any,
    db_path: Path,
    config: RefineConfig | None = None,
    engine: Engine | None = None,
) -> JobHandle:
    """Start a refine of ``label`` on its background thread (imports torch now). ``engine``:
    the app's, which the gate measures on (None: the gate opens one of its own)."""
    from macaron_local.refine.refine_loop import RefineJob

    job = RefineJob(label, profile=profile, db_path=db_path, config=config, engine=engine)
    return JobHandle(job.start())
