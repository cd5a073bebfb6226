"""``macaron reminders list|done|snooze``: the reminders the agent set, from the shell.

Owns the command-line edge of :mod:`macaron_local.agent.reminders` (the app fires them; this
lists them and marks them done or later). Must not hold reminder logic.
"""

from __future__ import annotations

from datetime import datetime

import click

from macaron_local.cli import edge


def _data():
    from macaron_local import paths

    return paths.data_dir()


@click.group(name="reminders")
def reminders_group() -> None:
    """Reminders set by the agent (the app shows each when it falls due)."""


@reminders_group.command("list")
@click.option("--all", "everything", is_flag=True, help="Also the fired and done ones.")
@edge
def list_cmd(everything: bool) -> None:
    """Pending reminders by time (local time)."""
    from macaron_local.agent.reminders import listing

    rows = listing(_data(), everything=everything)
    if not rows:
        click.echo("no reminders")
    for r in rows:
        click.echo(f"{r['id']:>4}  {r['at']}  {r['status']:<8} {r['text']}")


@reminders_group.command("done")
@click.argument("reminder_id", type=int)
@edge
def done_cmd(reminder_id: int) -> None:
    """Mark REMINDER_ID done (it will not fire)."""
    from macaron_local.agent.reminders import set_status

    r = _one(lambda: set_status(_data(), reminder_id, "done"))
    click.echo(f"done: {r['text']}")


@reminders_group.command("snooze")
@click.argument("reminder_id", type=int)
@click.option("--minutes", type=click.IntRange(1, 60 * 24 * 30), default=10, show_default=True)
@edge
def snooze_cmd(reminder_id: int, minutes: int) -> None:
    """Fire REMINDER_ID again in MINUTES."""
    from macaron_local.agent.reminders import snooze

    r = _one(lambda: snooze(_data(), reminder_id, minutes, datetime.now()))
    click.echo(f"snoozed to {r['at']}: {r['text']}")


def _one(op):
    try:
        return op()
    except KeyError as exc:
        raise click.ClickException(f"{exc.args[0]} (see `macaron reminders list --all`)") from exc
