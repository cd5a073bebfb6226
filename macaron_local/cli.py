"""The ``macaron`` command line: the edge where errors become messages.

Owns argument parsing and output formatting only. Each command builds what it needs (settings,
engine, store) and hands work to the runtime; a :class:`MacaronError` becomes a one-line message
with a hint and exit code 1, never a traceback.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from macaron_local.errors import MacaronError

if TYPE_CHECKING:
    from macaron_local.remote.hybrid import Notice


def edge(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn MacaronError into a clear message and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MacaronError as exc:
            click.echo(f"error: {exc}", err=True)
            if exc.hint:
                click.echo(f"hint: {exc.hint}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


class LazyGroup(click.Group):
    """Command groups owned by each capability, imported only when used (fast start, no cycles)."""

    LAZY = {
        "hcp": "macaron_local.hcp.cli:hcp",
        "plugins": "macaron_local.plugins.cli:plugins_group",
        "refine": "macaron_local.refine.cli:refine",
        "serve": "macaron_local.serve.cli:serve",
        "models": "macaron_local.model_manager.cli:models_group",
        "doctor": "macaron_local.doctor:doctor",
        "remote": "macaron_local.remote.cli:remote_group",
        "experience": "macaron_local.experience.cli:experience",
        "sandbox": "macaron_local.agent.cli:sandbox_group",
        "reminders": "macaron_local.agent.reminders_cli:reminders_group",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            module, attr = self.LAZY[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(package_name="macaron-local")
@click.option("--profile", "profile", default=None, help="Harness profile for the app.")
@click.pass_context
def main(ctx: click.Context, profile: str | None) -> None:
    """macaron-local: a private, local terminal assistant. With no command, opens the app."""
    if ctx.invoked_subcommand is None:
        from macaron_local.tui.run import main as tui_main

        sys.exit(tui_main(profile))
    if profile is not None:
        _hand_down(ctx, ctx.invoked_subcommand, profile)


def _hand_down(ctx: click.Context, name: str, profile: str) -> None:
    """``macaron --profile X CMD ...`` gives X to CMD's own ``--profile`` (and to those of a
    group's commands); a command that takes none refuses it rather than serve another profile."""
    command = ctx.command.get_command(ctx, name)  # type: ignore[attr-defined]
    found = _profile_defaults(command, profile) if command is not None else None
    if found is None:
        raise click.UsageError(
            f"`macaron {name}` takes no --profile (it is not about one profile)", ctx=ctx
        )
    ctx.default_map = {**(ctx.default_map or {}), name: found}


def _profile_defaults(command: click.Command, profile: str) -> dict[str, Any] | None:
    if isinstance(command, click.Group):
        subs = {n: m for n, c in command.commands.items() if (m := _profile_defaults(c, profile))}
        return subs or None
    opts = [p.name for p in command.params if isinstance(p, click.Option) and "--profile" in p.opts]
    return {opts[0]: profile} if opts and opts[0] else None


@main.command()
@click.option("--profile", default=None, help="Harness profile (default: tall-local).")
def tui(profile: str | None) -> None:
    """Open the terminal app."""
    from macaron_local.tui.run import main as tui_main

    sys.exit(tui_main(profile))


@main.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--session", "session_id", help="Continue this session (default: a new one).")
@click.option("--profile", help="Harness profile (default: tall-local).")
@click.option("--label", help="Pin the turn to a specialist (a label of the profile).")
@click.option(
    "--remote",
    "force_remote",
    is_flag=True,
    help="Send this turn to the remote server (hybrid mode); it falls back to local.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the turn record as one JSON object.")
@edge
def ask(
    text: tuple[str, ...],
    session_id: str | None,
    profile: str | None,
    label: str | None,
    force_remote: bool,
    as_json: bool,
) -> None:
    """Answer TEXT in one turn (route, answer, then the summary before exiting).

    The answer streams to stdout; the agent's tool steps, notices and the turn's badge go to
    stderr. ``--json`` prints the whole turn record instead, its tool calls included."""
    from macaron_local.turns.pipeline import Runtime
    from macaron_local.turns.turn import TurnEvents, TurnRequest

    with Runtime.open(profile) as rt:
        for warning in rt.warnings:
            click.echo(f"warning: {warning}", err=True)
        session = session_id or rt.new_session(" ".join(text)[:60]).id
        kinds: set[str] = set()

        def tell(notice: Notice) -> None:
            kinds.add(notice.kind)
            click.echo(f"\nnotice: {notice.message}", err=True)

        events = TurnEvents(
            on_text=None if as_json else (lambda piece: click.echo(piece, nl=False)),
            on_notice=tell,
            confirm=_ask_on_terminal,
        )
        request = TurnRequest(session, " ".join(text), label=label, remote=force_remote)
        record = rt.run_turn(request, events)
        if as_json:
            click.echo(json.dumps(record_json(record), ensure_ascii=False))
            return
        click.echo()
        if "rewritten" in kinds:  # the streamed text claimed what the record does not back
            click.echo(f"\n{record.answer}")
        for call in record.tool_calls:
            click.echo(tool_step_line(call), err=True)
        failed = f" · {record.failed_calls} tool calls failed" if record.failed_calls else ""
        click.echo(
            f"[{record.label} · {record.route_kind} · {record.backend}{failed}"
            f" · session {record.session_id}]",
            err=True,
        )


def record_json(record: Any) -> dict[str, Any]:
    """A turn record as ``ask --json`` prints it: every field, its tool calls included."""
    out: dict[str, Any] = record.model_dump(mode="json")
    out["tool_calls"] = [call.model_dump(mode="json") for call in record.tool_calls]
    return out


def tool_step_line(call: Any) -> str:
    """``tool step 1 · error · todos.add("buy milk") -> ValueError: ...``: one line per call."""
    code = " ".join(call.code.split())
    result = " ".join(call.result.split())
    return f"tool step {call.step + 1} · {call.status} · {code[:120]} -> {result[:200]}"


def _ask_on_terminal(tool: str, args: dict) -> bool:
    """A side-effecting tool asks first; without a terminal to ask on, it is declined."""
    import sys

    if not sys.stdin.isatty():
        click.echo(f"\nnotice: declined {tool} (it asks first; no terminal to ask on)", err=True)
        return False
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return click.confirm(f"\nrun {tool}({shown[:300]})?", default=False, err=True)


@main.command("route")
@click.argument("text", nargs=-1)
@click.option("--file", "file", type=click.File("r"), help='JSONL of {"text": ...} lines.')
@click.option("--profile", help="Harness profile (default: tall-local).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@edge
def route_cmd(text: tuple[str, ...], file, profile: str | None, as_json: bool) -> None:  # noqa: ANN001
    """Route TEXT (or every line of --file) without answering."""
    from macaron_local.turns.pipeline import Runtime

    if not text and file is None:
        raise click.UsageError("give TEXT or --file")
    with Runtime.open(profile) as rt:
        inputs = [" ".join(text)] if text else _jsonl_texts(file)
        for item in inputs:
            r = rt.route(item)
            row = {"label": r.label, "ms": r.ms, "kind": r.kind, "probs": r.probs}
            if r.error:
                row["error"] = r.error
            click.echo(json.dumps(row) if as_json or file else f"{r.label}  ({r.ms:.0f} ms)")


def _jsonl_texts(fh) -> list[str]:  # noqa: ANN001
    out = []
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            out.append(str(json.loads(line)["text"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise click.BadParameter(
                f'line {n}: expected a JSON object with "text" ({exc})', param_hint="--file"
            ) from exc
    return out
