"""``macaron hcp``: validate, list, show, diff and approve harness profiles.

Owns the command-line edge of the HCP package: it turns :class:`MacaronError` into a one-line
message and a non-zero exit, never a traceback. The root CLI mounts this group
(``main.add_command(hcp)``). Must not: hold logic beyond formatting (it calls the package).
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from macaron_local.errors import MacaronError
from macaron_local.hcp.approvals import approve as record_approval
from macaron_local.hcp.approvals import required_changes
from macaron_local.hcp.canonical import canonical_data, dump_toml
from macaron_local.hcp.diff import Change, diff_profiles
from macaron_local.hcp.loader import list_profiles, load_profile


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except MacaronError as exc:
        hint = f"\n  hint: {exc.hint}" if exc.hint else ""
        raise click.ClickException(f"{exc}{hint}") from exc


@click.group(name="hcp")
def hcp() -> None:
    """Harness contracts (HCP profiles): the settings every turn and training run obey."""


@hcp.command(name="list")
def list_cmd() -> None:
    """List the profiles and where each comes from."""
    for entry in list_profiles():
        note = " (overrides the bundled one)" if entry.overrides_bundled else ""
        click.echo(f"{entry.name:<20} {entry.origin:<8} {entry.path}{note}")


@hcp.command()
@click.argument("profiles", nargs=-1)
def validate(profiles: tuple[str, ...]) -> None:
    """Validate profiles by NAME or PATH (all known profiles when none is given)."""
    refs = list(profiles) or [entry.name for entry in list_profiles()]
    failed = 0
    for ref in refs:
        try:
            profile = load_profile(ref)
        except MacaronError as exc:
            failed += 1
            where = "" if getattr(exc, "path", None) else f"{ref}: "
            click.echo(f"FAIL  {where}{exc}", err=True)
            continue
        click.echo(f"ok    {profile.id}  {profile.content_hash}  {profile.source}")
    if failed:
        raise click.ClickException(f"{failed} of {len(refs)} profile(s) are invalid")


@hcp.command(name="new")
@click.argument("name")
@click.option("--base", "base_id", required=True, help="The base model's id (macaron models add).")
@click.option("--gpu", is_flag=True, help="Extend tall-gpu (GPU offload) instead of tall-local.")
def new_cmd(name: str, base_id: str, gpu: bool) -> None:
    """A profile NAME for the base BASE_ID, its specialists untrained (base weights) until
    `macaron refine bootstrap --profile NAME` trains them."""
    from macaron_local.hcp.new import new_profile

    with _errors():
        path, profile = new_profile(name, base_id, parent="tall-gpu" if gpu else "tall-local")
    click.echo(f"wrote {path} (extends {'tall-gpu' if gpu else 'tall-local'}, base {base_id})")
    labels = ",".join(profile.labels)
    click.echo(f"next: macaron refine bootstrap --profile {name} --labels {labels}")


@hcp.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of TOML.")
def show(name: str, as_json: bool) -> None:
    """Show the resolved profile NAME (extends applied, defaults filled in) and its hash."""
    with _errors():
        profile = load_profile(name)
    if as_json:
        out = {
            "id": profile.id,
            "content_hash": profile.content_hash,
            "source": str(profile.source),
            "profile": canonical_data(profile),
        }
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    click.echo(f"# profile {profile.id}, resolved from {profile.source}")
    click.echo(f"# content hash: {profile.content_hash}")
    click.echo(dump_toml(profile), nl=False)


@hcp.command()
@click.argument("a")
@click.argument("b")
def diff(a: str, b: str) -> None:
    """Semantic diff from profile A to profile B; '!' marks security-relevant changes."""
    with _errors():
        old, new = load_profile(a), load_profile(b)
    changes = diff_profiles(old, new)
    click.echo(f"--- {old.id} {old.content_hash[:12]}\n+++ {new.id} {new.content_hash[:12]}")
    _print_changes(changes, click.echo)
    risky = sum(c.security_relevant for c in changes)
    click.echo(f"{len(changes)} change(s), {risky} security-relevant")


def _print_changes(changes: list[Change], echo: Callable[[str], None]) -> None:
    for change in changes:
        echo(change.describe())


@hcp.command(name="approve")
@click.argument("name")
@click.option("--who", default=None, help="Who approves (default: the login name).")
@click.option("--note", default=None, help="Why, for the record.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def approve_cmd(name: str, who: str | None, note: str | None, yes: bool) -> None:
    """Record a human approval of profile NAME's current content hash in the store."""
    from macaron_local import paths
    from macaron_local.store.db import open_db

    with _errors():
        profile = load_profile(name)
        changes = required_changes(profile)
    click.echo(f"profile {profile.id}, content hash {profile.content_hash}")
    if changes:
        click.echo("security-relevant changes against its baseline:")
        _print_changes(changes, click.echo)
    else:
        click.echo("no security-relevant changes against its baseline (approval not required)")
    if not yes:
        click.confirm("approve this exact profile?", abort=True)
    with _errors():
        db = open_db(paths.db_path())
        try:
            record = record_approval(db, profile, who or getpass.getuser(), note)
        finally:
            db.close()
    click.echo(
        f"approved {record.profile_id} {record.content_hash[:12]} "
        f"by {record.approved_by} at {record.approved_at}"
    )
