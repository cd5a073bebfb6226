"""``macaron models list|add|pull|verify|remove``: the model manager's command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from macaron_local.cli import edge
from macaron_local.manifests import manifest_problems, manifests
from macaron_local.model_manager.store import (
    FileState,
    check,
    model_files,
    pull,
    remove,
    verify_model,
)

MARK = {"verified": "ok", "present": "ok?", "missing": "--", "unpublished": "..", "corrupt": "!!"}


@click.group("models")
def models_group() -> None:
    """Base models and adapters: list, download, verify, remove."""


@models_group.command("list")
@click.option("--verify", "do_hash", is_flag=True, help="Hash every file (slow for big ones).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file.")
@edge
def list_cmd(do_hash: bool, as_json: bool) -> None:
    """Every manifest and the state of its files (presence and size; --verify hashes)."""
    for m in manifests().values():
        states = [check(f, hash_files=do_hash) for f in model_files(m)]
        if as_json:
            for s in states:
                click.echo(json.dumps(_row(s, m.source.kind)))
            continue
        click.echo(f"{m.id}  ({m.source.kind}{': ' + m.source.repo if m.source.repo else ''})")
        click.echo(f"  {m.name}")
        for s in states:
            _echo_state(s)
    for problem in manifest_problems():  # left out of the list above, named here
        click.echo(
            f"error: {problem}" + (f" (hint: {problem.hint})" if problem.hint else ""), err=True
        )


@models_group.command("add")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "model_id", help="The model's id (default: from the file name).")
@click.option(
    "--train-from",
    metavar="REPO[@REVISION]",
    help="The base's own checkpoint on the hub (config.json + safetensors): training reads it "
    "instead of dequantizing the GGUF.",
)
@edge
def add_cmd(path: Path, model_id: str | None, train_from: str | None) -> None:
    """Register the GGUF model at PATH as a base (the file stays where it is)."""
    from macaron_local.model_manager.add import add_model

    m = add_model(path, model_id, train_from)
    click.echo(
        f"added {m.id}: {m.architecture}, context {m.context_length}, "
        f"{m.size / 2**20:.0f} MiB, sha256 {m.sha256[:12]}…"
    )
    click.echo(f"next: macaron hcp new NAME --base {m.id}")


@models_group.command("pull")
@click.argument("model_id")
@click.option("--endpoint", help="Hub endpoint (default: HF_ENDPOINT, else huggingface.co).")
@click.option("--revision", help="Hub revision (default: the manifest's, else main).")
@click.option("--no-progress", is_flag=True, help="No progress bars.")
@edge
def pull_cmd(model_id: str, endpoint: str | None, revision: str | None, no_progress: bool) -> None:
    """Download MODEL_ID's files (resuming an interrupted pull) and verify their sha256."""
    states = pull(model_id, endpoint=endpoint, revision=revision, progress=not no_progress)
    for s in states:
        _echo_state(s)
    click.echo(f"{model_id}: {len(states)} file(s) verified")


@models_group.command("verify")
@click.argument("model_id", required=False)
@edge
def verify_cmd(model_id: str | None) -> None:
    """Check size and sha256 of MODEL_ID's files (default: every manifest's present files)."""
    ids = [model_id] if model_id else list(manifests())
    failed = False
    for mid in ids:
        for s in verify_model(mid):
            if model_id is None and s.state in ("missing", "unpublished"):
                continue
            _echo_state(s)
            failed = failed or s.state != "verified"
    if failed:
        click.echo(
            "hint: `macaron models pull MODEL_ID` downloads what is missing or corrupt", err=True
        )
        sys.exit(1)


@models_group.command("remove")
@click.argument("model_id")
@click.option("--yes", is_flag=True, help="Do not ask.")
@edge
def remove_cmd(model_id: str, yes: bool) -> None:
    """Delete MODEL_ID's downloaded files."""
    if not yes:
        click.confirm(f"delete the downloaded files of {model_id}?", abort=True)
    folder = remove(model_id)
    click.echo(f"removed {folder}")


def _echo_state(s: FileState) -> None:
    detail = f"  {s.detail}" if s.detail else ""
    click.echo(f"  [{MARK[s.state]:>3}] {s.file.role:<11} {s.state:<11} {s.file.path}{detail}")


def _row(s: FileState, kind: str) -> dict[str, object]:
    return {
        "model": s.file.model,
        "role": s.file.role,
        "source": kind,
        "state": s.state,
        "path": str(s.file.path),
        "size": s.file.size,
        "sha256": s.file.sha256,
        "detail": s.detail,
    }
