"""The ``macaron`` command line: the edge where errors become messages.

Owns argument parsing and output formatting only. Each command builds what it needs (settings,
engine, store) and hands work to the runtime; a :class:`MacaronError` becomes a one-line message
with a hint and exit code 1, never a traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click

from macaron_local.errors import MacaronError


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


@click.group(invoke_without_command=True)
@click.version_option(package_name="macaron-local")
@click.pass_context
def main(ctx: click.Context) -> None:
    """macaron-local: a private, local terminal assistant."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@main.command()
@click.argument("text", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the turn record).")
@edge
def ask(text: tuple[str, ...], as_json: bool) -> None:
    """Answer TEXT in one turn on the embedded default."""
    from macaron_local.engine import Engine
    from macaron_local.models import embedded_model_file

    question = " ".join(text)
    with Engine(embedded_model_file()) as engine:
        prompt = engine.render_chat([
            {"role": "system", "content": "You are a helpful, concise assistant."},
            {"role": "user", "content": question},
        ])
        stream = engine.generate(prompt, max_tokens=512)
        for piece in stream:
            if not as_json:
                click.echo(piece, nl=False)
        done = stream.result()
    if as_json:
        click.echo(json.dumps({"answer": done.text.strip(), "tokens": {
            "prompt": done.n_prompt, "completion": done.n_generated}}))
    else:
        click.echo()


def _mount() -> None:
    """Attach the command groups each capability owns (imported here, not at their import)."""
    from macaron_local.hcp.cli import hcp

    main.add_command(hcp)


_mount()
