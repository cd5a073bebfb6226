"""``macaron experience ...`` and the learning commands of ``macaron refine`` (run, harness).

Owns argument parsing and output only; the work is in :mod:`~macaron_local.experience.log`,
:mod:`macaron_local.refine.refine_loop` and :mod:`macaron_local.refine.harness`. torch is imported
only when ``refine run`` starts training. The lead mounts these with
``main.add_command(experience)`` and ``add_refine_commands(refine)``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from macaron_local.cli import edge

_PROFILE = click.option("--profile", "profile_id", default="tall-local", show_default=True)


def _open(profile_id: str) -> tuple[Any, Any]:
    from macaron_local import paths
    from macaron_local.hcp import load_profile
    from macaron_local.store import open_db

    return open_db(paths.db_path()), load_profile(profile_id)


@click.group("experience")
def experience() -> None:
    """The opt-in, local experience log that `macaron refine run` learns from."""


@experience.command("status")
@_PROFILE
@click.option("--json", "as_json", is_flag=True)
@edge
def status_cmd(profile_id: str, as_json: bool) -> None:
    """Whether experience is kept, and how much there is."""
    from macaron_local.experience import log
    from macaron_local.experience.settings import EXPLAINER

    db, profile = _open(profile_id)
    st = log.status(db, profile)
    if as_json:
        click.echo(json.dumps(st, indent=1))
        return
    click.echo(
        f"experience logging: {'ON' if st['opt_in'] else 'off'}"
        f" (retention {st['retention_days'] or 'until purged'} days)"
    )
    click.echo(
        f"kept turns: {st['turns']} {st['per_label']}; signals {st['signals']}; "
        f"redacted parts {st['redactions']}; excluded chats {st['excluded_sessions']}"
    )
    click.echo(EXPLAINER)


@experience.command("on")
@edge
def on_cmd() -> None:
    """Opt in: keep experience locally from now on."""
    from macaron_local.experience.settings import EXPLAINER, set_user_choice

    set_user_choice(True)
    click.echo("experience logging is ON.\n" + EXPLAINER)


@experience.command("off")
@edge
def off_cmd() -> None:
    """Opt out: keep nothing new (what is kept stays until you purge it)."""
    from macaron_local.experience.settings import set_user_choice

    set_user_choice(False)
    click.echo("experience logging is off (delete what was kept: macaron experience purge)")


@experience.command("exclude")
@click.argument("session_id")
@click.option("--undo", is_flag=True, help="Learn from this chat again (from now on).")
@edge
def exclude_cmd(session_id: str, undo: bool) -> None:
    """Do not learn from one chat (and delete what was kept from it)."""
    from macaron_local import paths
    from macaron_local.experience.log import exclude_session
    from macaron_local.store import open_db

    n = exclude_session(open_db(paths.db_path()), session_id, not undo)
    click.echo(f"{session_id}: {'learning again' if undo else f'excluded; {n} kept turns deleted'}")


@experience.command("export")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path))
@_PROFILE
@edge
def export_cmd(output: Path | None, profile_id: str) -> None:
    """Write everything kept as JSON lines (stdout by default)."""
    from macaron_local.experience.log import export

    db, _ = _open(profile_id)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in export(db))
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {text.count(chr(10))} turns to {output}")


@experience.command("purge")
@click.option("--yes", is_flag=True, help="Do not ask.")
@_PROFILE
@edge
def purge_cmd(yes: bool, profile_id: str) -> None:
    """Delete every kept turn and signal."""
    from macaron_local.experience.log import purge

    if not yes:
        click.confirm("Delete all kept experience?", abort=True)
    db, _ = _open(profile_id)
    click.echo(f"purged {purge(db)} kept turns")


# --- macaron refine run | harness ---------------------------------------------------------


@click.command("run")
@click.option("--label", help="The label to refine (default: the profile's router label).")
@_PROFILE
@click.option("--steps", type=int, help="Optimizer steps (default: RefineConfig).")
@click.option("--nice", "niceness", type=int, default=19, show_default=True)
@click.option("--no-promote", is_flag=True, help="Never promote, even when the gate passes.")
@click.option("--quiet", is_flag=True)
@edge
def run_cmd(
    label: str | None,
    profile_id: str,
    steps: int | None,
    niceness: int,
    no_promote: bool,
    quiet: bool,
) -> None:
    """Learn a new LABEL revision from experience; promote it only if the gate passes."""
    import threading

    from macaron_local.refine.refine_loop import RefineConfig, run_refine

    os.nice(max(0, niceness))  # the whole process: training yields to everything else
    cfg = RefineConfig(**({"steps": steps} if steps else {}))
    db, profile = _open(profile_id)
    label = label or profile.router_label
    cancel = threading.Event()
    try:
        report = run_refine(
            label,
            profile=profile,
            db=db,
            config=cfg,
            cancel=cancel,
            promote=not no_promote,
            echo=(lambda s: None) if quiet else click.echo,
        )
    except KeyboardInterrupt:
        cancel.set()
        raise
    click.echo(f"{report.status}: {report.summary}")
    if report.report_json:
        click.echo(f"report: {report.report_json}")


@click.command("harness")
@click.option(
    "--suite",
    "suite",
    default="default",
    show_default=True,
    help="A suite folder or name under bench/harness_suite.",
)
@_PROFILE
@click.option("--budget", type=int, default=4, show_default=True, help="Variants to try.")
@click.option("--limit", type=int, default=0, help="Only the first N tasks (0: all).")
@click.option(
    "--write/--no-write",
    default=True,
    show_default=True,
    help="Save the best variant as a new user profile version.",
)
@edge
def harness_cmd(suite: str, profile_id: str, budget: int, limit: int, write: bool) -> None:
    """Search profile variants with the weights frozen; print coverage job by job."""
    from macaron_local.refine.harness import run_search

    os.nice(19)
    result = run_search(
        suite, profile_id=profile_id, budget=budget, limit=limit, write=write, echo=click.echo
    )
    click.echo(result.summary)


def add_refine_commands(group: click.Group) -> None:
    """Mount ``run`` and ``harness`` on the ``macaron refine`` group."""
    group.add_command(run_cmd)
    group.add_command(harness_cmd)
