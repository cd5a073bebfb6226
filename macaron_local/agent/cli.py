"""``macaron sandbox run FILE``: run a Python file in a fresh REPL sandbox, as L1's code runs.

Owns the command-line edge of the REPL sandbox: it builds an agent session from the profile
(its ``[repl]`` policy and the L1 tool allowlist, the enabled plugins' tools, the confirmation
on the terminal), runs the file as one block, prints what it printed and exits with the reason
when the code raised (1) or a limit stopped it (3). Plugin authors use it to check their tools;
the tests use it to check the sandbox from outside. Must not hold sandbox logic.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

import click

from macaron_local.errors import MacaronError

EXIT_RAISED = 1
EXIT_STOPPED = 3


@click.group(name="sandbox")
def sandbox_group() -> None:
    """The REPL sandbox model-written code runs in (docs/plugins.md, "The REPL sandbox")."""


@sandbox_group.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--profile", default=None, help="Harness profile (default: tall-local).")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The writable folder (default: a fresh temporary one, removed afterwards).",
)
@click.option(
    "--no-audit-hook",
    "no_hook",
    is_flag=True,
    help="Leave out the audit hook: see what the OS boundary alone allows.",
)
def run_cmd(file: Path, profile: str | None, workspace: Path | None, no_hook: bool) -> None:
    """Run FILE in a fresh REPL sandbox with the profile's policy; print what it printed."""
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(MacaronError(f"cannot read {file}: {exc}"))
    try:
        if workspace is not None:
            workspace.mkdir(parents=True, exist_ok=True)
            status, output = _run(source, profile, workspace, no_hook)
        else:
            with tempfile.TemporaryDirectory(prefix="macaron-sandbox-") as tmp:
                status, output = _run(source, profile, Path(tmp), no_hook)
    except MacaronError as exc:
        _fail(exc)
    if output:
        click.echo(output)
    if status == "ok":
        return
    last = output.splitlines()[-1] if output else status
    if status == "error":
        click.echo(f"sandbox: the code raised {last}", err=True)
        sys.exit(EXIT_RAISED)
    click.echo(f"sandbox: stopped ({status}): {last}", err=True)
    sys.exit(EXIT_STOPPED)


def _run(source: str, profile: str | None, workspace: Path, no_hook: bool) -> tuple[str, str]:
    from macaron_local.agent.session import AgentSession
    from macaron_local.agent.tools import ToolContext
    from macaron_local.cli import _ask_on_terminal
    from macaron_local.hcp import load_profile
    from macaron_local.paths import data_dir
    from macaron_local.turns.pipeline import DEFAULT_PROFILE
    from macaron_local.turns.tools import load_registry

    prof = load_profile(profile or DEFAULT_PROFILE)
    registry, warnings = load_registry()
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    context = ToolContext(workspace=workspace.resolve(), data_dir=data_dir())
    agent = AgentSession(prof, registry, confirm=_ask_on_terminal, context=context)
    if agent.repl is None:
        raise MacaronError(f"the REPL is off: {agent.repl_off}", hint="macaron doctor")
    if no_hook:
        agent.repl.policy = replace(agent.repl.policy, audit_hook=False)
    try:
        res = agent.repl.run(source)
    finally:
        agent.close()
    return res.status, res.output


def _fail(exc: MacaronError) -> NoReturn:
    click.echo(f"error: {exc}", err=True)
    if exc.hint:
        click.echo(f"hint: {exc.hint}", err=True)
    sys.exit(1)
