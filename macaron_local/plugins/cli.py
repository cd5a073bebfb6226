"""``macaron plugins list|enable|disable``: a click group the top-level CLI mounts.

Owns the command-line view of plugins; state lives in ``plugins.toml`` (``state.py``).
"""

from __future__ import annotations

import click

from macaron_local.plugins import state
from macaron_local.plugins.manager import PluginManager


@click.group("plugins")
def plugins_group() -> None:
    """List, enable and disable plugins (bundled, installed and in the user folder)."""


@plugins_group.command("list")
def list_cmd() -> None:
    """Show every plugin, where it comes from, its state and the tools it adds."""
    manager = PluginManager()
    manager.load()
    manager.registry()  # finds the tool-name conflicts
    rows = manager.plugins()
    if not rows:
        click.echo("no plugins found")
        return
    width = max(len(p.name) for p in rows)
    for p in rows:
        detail = ", ".join(p.tools) if p.status == "loaded" else p.error
        click.echo(f"{p.name:<{width}}  {p.source:<10}  {p.status:<8}  {detail}".rstrip())
    for event in manager.events:
        if event.kind == "conflict":
            click.echo(f"conflict: {event.plugin}: {event.message}")


def _known(name: str) -> None:
    names = {c.name for c in PluginManager().discover()}
    if name not in names:
        raise click.ClickException(f"no plugin named {name!r} (known: {', '.join(sorted(names))})")


@plugins_group.command("enable")
@click.argument("name")
def enable_cmd(name: str) -> None:
    """Enable plugin NAME (takes effect the next time plugins load)."""
    _known(name)
    state.set_enabled(name, True)
    click.echo(f"enabled {name}")


@plugins_group.command("disable")
@click.argument("name")
def disable_cmd(name: str) -> None:
    """Disable plugin NAME; its tools disappear the next time plugins load."""
    _known(name)
    state.set_enabled(name, False)
    click.echo(f"disabled {name}")
