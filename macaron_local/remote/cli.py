"""``macaron remote``: log in (API key to the OS keyring), log out, and show the remote's status.

Owns the command-line edge of hybrid mode. The key is read without echo and handed straight to
:mod:`macaron_local.secrets`; it is never printed (status shows its source and length only).
Where no keyring backend works (a headless box) it says so and offers the environment variable.
The root CLI mounts this group (``main.add_command(remote_group)``).
Must not: hold logic beyond formatting, or write the key anywhere itself.
"""

from __future__ import annotations

import json
import os
import sys

import click
from pydantic import SecretStr

from macaron_local import secrets
from macaron_local.errors import MacaronError


def _fail(exc: MacaronError) -> None:
    click.echo(f"error: {exc}", err=True)
    if exc.hint:
        click.echo(f"hint: {exc.hint}", err=True)
    sys.exit(1)


@click.group(name="remote")
def remote_group() -> None:
    """Hybrid mode: the remote (Venti) server for heavy turns, and its API key."""


@remote_group.command()
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the key from standard input.")
def login(from_stdin: bool) -> None:
    """Save the remote API key in the OS keyring (asked for without echo)."""
    status = secrets.keyring_status()
    if not status.usable:
        click.echo(f"error: {status.reason} ({status.backend}); the key was not saved", err=True)
        click.echo(f"hint: {secrets.ENV_HINT}", err=True)
        sys.exit(1)
    if from_stdin:
        raw = sys.stdin.readline().strip()
    else:
        raw = click.prompt("API key", hide_input=True, prompt_suffix=": ")
    try:
        backend = secrets.save_api_key(SecretStr(raw))
    except MacaronError as exc:
        _fail(exc)
    click.echo(f"saved the API key in the keyring ({backend})")


@remote_group.command()
def logout() -> None:
    """Remove the remote API key from the OS keyring."""
    try:
        removed = secrets.delete_api_key()
    except MacaronError as exc:
        _fail(exc)
    click.echo("removed the API key from the keyring" if removed else "no key in the keyring")
    if os.environ.get(secrets.ENV_VAR):
        click.echo(f"note: ${secrets.ENV_VAR} is still set in this environment", err=True)


@remote_group.command()
@click.option("--profile", default="hybrid", show_default=True, help="Harness profile.")
@click.option("--check/--no-check", default=True, help="Probe the endpoint's health.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def status(profile: str, check: bool, as_json: bool) -> None:
    """Where the endpoint and the key come from, and whether the remote answers."""
    from macaron_local.hcp import load_profile
    from macaron_local.remote.hybrid import RemoteHook

    try:
        hook = RemoteHook(load_profile(profile))
    except MacaronError as exc:
        _fail(exc)
    row = _status_row(hook, check)
    if as_json:
        click.echo(json.dumps(row))
        return
    for key, value in row.items():
        click.echo(f"{key:<16} {value if value is not None else '-'}")


def _status_row(hook, check: bool) -> dict[str, object]:  # RemoteHook
    kr = secrets.keyring_status()
    key = secrets.resolve_api_key()
    endpoint = hook.endpoint(forced=True)
    row: dict[str, object] = {
        "profile": hook.profile.id,
        "enabled": hook.profile.remote.enabled,
        "endpoint": endpoint,
        "served_model": hook.profile.remote.served_model,
        "heavy_labels": ",".join(hook.profile.remote.heavy.labels) or None,
        "keyring": kr.backend if kr.usable else f"unavailable ({kr.reason})",
        "key": f"{key.source} ({secrets.masked(key.value)})" if key else None,
    }
    if not kr.usable and key is None:
        row["hint"] = secrets.ENV_HINT
    if check and endpoint:
        client, _health = hook.connect(endpoint)
        reason = client.probe(hook.profile.remote.connect_timeout_s)
        row["health"] = "ok" if reason is None else f"failing ({reason})"
        hook.close()
    return row
