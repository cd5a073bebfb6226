"""``macaron refine``: train adapters and manage their lineage from the command line.

Owns argument parsing and output only; work is done by :mod:`~macaron_local.refine.train`,
:mod:`~macaron_local.refine.bootstrap` and :mod:`~macaron_local.lineage`. torch is
imported only by the commands that train, so ``log``/``promote``/``rollback`` start fast.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from macaron_local.cli import edge

_PROFILE = click.option(
    "--profile",
    "profile_id",
    default="tall-local",
    show_default=True,
    help="The HCP profile whose policy record is used.",
)


def _train_options(fn: Any) -> Any:
    opts = [
        click.option("--steps", type=int, help="Optimizer steps (default: TrainConfig)."),
        click.option("--epochs", type=float, help="Passes over the data (overrides --steps)."),
        click.option("--batch-size", type=int),
        click.option("--max-len", type=int, help="Longest example in tokens (longer: cut)."),
        click.option("--rank", type=int),
        click.option("--alpha", type=float),
        click.option("--lr", type=float),
        click.option("--seed", type=int),
        click.option("--f32", is_flag=True, help="Train in float32 instead of bf16 autocast."),
        click.option(
            "--tools",
            "tools_file",
            type=click.Path(exists=True, dir_okay=False),
            help="JSON object tool name -> one-line description for the prompts "
            "(default: the built-in tools serving describes).",
        ),
        click.option("--quiet", is_flag=True, help="No progress bar."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _config(kw: dict[str, Any]) -> Any:
    from macaron_local.refine.train import TrainConfig

    keys = ("steps", "epochs", "batch_size", "max_len", "rank", "alpha", "lr", "seed", "kl_weight")
    update = {k: kw[k] for k in keys if kw.get(k) is not None}
    if kw.get("f32"):
        update["bf16"] = False
    return TrainConfig(**update)


def _tools(path: str | None) -> Mapping[str, str]:
    if not path:
        from macaron_local.turns.tools import tool_descriptions

        return tool_descriptions()
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise click.BadParameter("--tools must be a JSON object of name -> description")
    return data


@click.group("refine")
def refine() -> None:
    """Train LoRA specialists and choose which revision serves each label."""


@refine.command("log")
@click.option("--label", help="Only revisions of this label.")
@_PROFILE
@click.option("--json", "as_json", is_flag=True)
@edge
def log_cmd(label: str | None, profile_id: str, as_json: bool) -> None:
    """List adapter revisions, oldest first; '*' marks the ones serving now."""
    from macaron_local import lineage

    revs = lineage.list_revisions(label)
    serving = lineage.get_policy(profile_id).serving
    if as_json:
        click.echo(
            json.dumps(
                {"serving": serving, "revisions": [r.model_dump(mode="json") for r in revs]},
                indent=1,
            )
        )
        return
    if not revs:
        click.echo("no adapter revisions yet (train one with `macaron refine train`)")
        return
    for r in revs:
        mark = "*" if serving.get(r.label) == r.revision else " "
        loss = r.metrics.get("final_loss")
        parent = r.parent[:12] if r.parent else "-"
        click.echo(
            f"{mark} {r.label:<4} {r.revision[:12]}  {r.created_at}  parent {parent}"
            f"  loss {loss if loss is not None else '-'}  {r.size / 2**20:.1f} MiB"
        )


@refine.command("promote")
@click.argument("label")
@click.argument("revision")
@_PROFILE
@edge
def promote_cmd(label: str, revision: str, profile_id: str) -> None:
    """Serve REVISION (sha256 or unique prefix) for LABEL."""
    from macaron_local import lineage

    policy = lineage.promote(profile_id, label, revision)
    click.echo(f"{profile_id}: {label} -> {policy.serving[label][:12]}")


@refine.command("rollback")
@click.argument("label")
@_PROFILE
@edge
def rollback_cmd(label: str, profile_id: str) -> None:
    """Serve the revision LABEL had before the current one."""
    from macaron_local import lineage

    policy = lineage.rollback(profile_id, label)
    now = policy.serving.get(label)
    click.echo(f"{profile_id}: {label} -> {now[:12] if now else 'profile default'}")


@refine.command("train")
@click.argument("label")
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@_PROFILE
@click.option(
    "--base",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Base GGUF (default: the profile's base).",
)
@click.option(
    "--register/--no-register",
    default=True,
    show_default=True,
    help="Add the result to the lineage store as a new revision.",
)
@_train_options
@edge
def train_cmd(
    label: str,
    data: Path,
    output: Path,
    profile_id: str,
    base: Path | None,
    register: bool,
    **kw: Any,
) -> None:
    """Train an adapter for LABEL on DATA (JSONL) and write it to OUTPUT (GGUF)."""
    from macaron_local import lineage
    from macaron_local.adapter_base import training_base
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.hcp import load_profile
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.bootstrap import examples_from_rows
    from macaron_local.refine.data import load_jsonl
    from macaron_local.refine.train import train

    profile = load_profile(profile_id)
    cfg = _config(kw)
    tb = training_base(profile, base)
    base_path, base_sha = tb.path, tb.sha256
    examples = examples_from_rows(
        load_jsonl(data), label=label, profile=profile, tools=_tools(kw.get("tools_file"))
    )
    planned = _plan(tb, cfg, [len(examples)])
    parent = lineage.get_policy(profile_id).serving.get(label)
    output.parent.mkdir(parents=True, exist_ok=True)
    res = train(
        examples,
        model=load_base(base_path, weights=tb.training_weights(progress=not kw.get("quiet"))),
        tokenizer=shared_tokenizer(base_path),
        out=output,
        label=label,
        base_sha256=base_sha,
        config=cfg,
        parent=parent,
        profile_hash=profile.contract_hash_for(label),
        progress=not kw.get("quiet"),
    )
    click.echo(
        f"{label}: {res.steps} steps, {res.tokens_per_s:.0f} tok/s, "
        f"loss {res.losses[0]:.3f} -> {res.losses[-1]:.3f}; wrote {output}"
    )
    _peak(planned)
    if register and res.path is not None:
        rev = lineage.register_revision(
            res.path,
            label=label,
            parent=parent,
            base_sha256=base_sha,
            data_hash=res.data_hash,
            profile_hash=profile.contract_hash_for(label),
            config=cfg.model_dump(mode="json"),
            metrics={"final_loss": res.losses[-1], "steps": res.steps},
        )
        click.echo(
            f"registered revision {rev.revision[:12]} "
            f"(serve it: macaron refine promote {label} {rev.revision[:12]})"
        )


@refine.command("bootstrap")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder with route/chat/agent/code/genui/summary.jsonl "
    "(default: the bundled models/data).",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the GGUFs go (default: models/adapters beside the manifest).",
)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Manifest to add [[adapters]] to (default: the embedded model's).",
)
@click.option("--labels", default="L0,L1,L2,L3", show_default=True)
@click.option(
    "--resume-from-shipped",
    is_flag=True,
    help="Start each label from the adapter the manifest ships now (continued training; "
    "the new revision's parent is the shipped one).",
)
@click.option(
    "--kl-weight",
    type=float,
    help="With --resume-from-shipped: keep the router's answers (chat, summaries) close to "
    "the adapter it starts from (or --anchor), KL at this weight (default 0: off).",
)
@click.option(
    "--anchor",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --kl-weight: the GGUF LoRA whose answers the router keeps (default: the "
    "shipped adapter the run starts from).",
)
@_PROFILE
@_train_options
@edge
def bootstrap_cmd(
    data_dir: Path | None,
    out_dir: Path | None,
    manifest: Path | None,
    labels: str,
    resume_from_shipped: bool,
    anchor: Path | None,
    profile_id: str,
    **kw: Any,
) -> None:
    """Train the default specialists from the bundled data and write them into the manifest."""
    from macaron_local import lineage, paths
    from macaron_local.adapter_base import training_base
    from macaron_local.errors import RefineError
    from macaron_local.hcp import load_profile
    from macaron_local.manifests import load_manifest
    from macaron_local.refine.bootstrap import bootstrap, label_examples

    profile = load_profile(profile_id)
    tb = training_base(profile)  # the profile's base: its manifest gets the adapters
    manifest = manifest or tb.manifest_path()
    if load_manifest(manifest).sha256 != tb.sha256:
        raise RefineError(
            f"{manifest} describes another base than this profile's, {tb.describe()}",
            hint="leave out --manifest: the profile's base manifest is the default",
        )
    data_dir = data_dir or paths.bundled("models") / "data"
    out_dir = out_dir or manifest.parent / "adapters"
    cfg, chosen = _config(kw), [s.strip() for s in labels.split(",") if s.strip()]
    tools = _tools(kw.get("tools_file"))
    sizes = [len(label_examples(data_dir, lb, profile, tools)) for lb in chosen]
    planned = _plan(tb, cfg, sizes)
    built = bootstrap(
        profile=profile,
        base=tb.path,
        base_sha256=tb.sha256,
        weights=tb.training_weights(progress=not kw.get("quiet")),
        data_dir=data_dir,
        out_dir=out_dir,
        manifest=manifest,
        config=cfg,
        labels=chosen,
        tools=tools,
        progress=not kw.get("quiet"),
        echo=click.echo,
        resume_from_shipped=resume_from_shipped,
        anchor=anchor,
    )
    for b in built:  # a profile that does not serve its manifest's adapters gets them promoted
        if profile.adapters[b.label].revision != "bundled":
            lineage.promote(profile.id, b.label, b.revision, base=tb)
            click.echo(f"{profile.id}: {b.label} -> {b.revision[:12]}")
    click.echo(f"{'label':<6}{'examples':>9}{'time s':>9}{'tok/s':>8}{'loss':>8}  revision")
    for b in built:
        click.echo(
            f"{b.label:<6}{b.n_examples:>9}{b.wall_s:>9.1f}{b.tokens_per_s:>8.0f}"
            f"{b.final_loss:>8.3f}  {b.revision[:12]}"
        )
    _peak(planned)


def _plan(tb: Any, cfg: Any, sizes: list[int]) -> Any:
    """Say the run's plan (backend, device, memory, time) and refuse one that cannot fit;
    ``sizes`` are the example counts of the labels it trains (``--epochs`` steps follow them)."""
    from macaron_local.refine.plan import check_fits, plan

    steps = sum(cfg.total_steps(n) for n in sizes)
    planned = plan(tb.path, tb.architecture, cfg, steps=steps, checkpoint=tb.has_checkpoint)
    click.echo(planned.describe(), err=True)
    check_fits(planned)
    return planned


def _peak(planned: Any) -> None:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    click.echo(
        f"peak memory {peak / 2**30:.2f} GiB (planned {planned.memory_bytes / 2**30:.2f} GiB, "
        f"ratio {peak / planned.memory_bytes:.2f})",
        err=True,
    )


def _mount_learning() -> None:
    """``refine run`` and ``refine harness`` live with the experience log that feeds them."""
    from macaron_local.experience.cli import add_refine_commands

    add_refine_commands(refine)


_mount_learning()
