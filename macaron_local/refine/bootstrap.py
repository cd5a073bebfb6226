"""Bootstrap: train the default specialists from the bundled data and ship them.

Owns the data mix of each label (L0 = routing + chat + its summaries, L1 = agent episodes + its
summaries, L2 = code + its summaries, L3 = GenUI + its summaries), turning data rows into the
conversations serving really sends (the label's own system prompt when a row has none), one
training run per label on one shared base, registering each result in the lineage store and
writing its ``[[adapters]]`` entry into the base model's manifest and its lineage record
(``<label>.json``, the same JSON as in the store) beside the shipped GGUF.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from macaron_local.errors import RefineError
from macaron_local.refine.data import Example, load_jsonl, route_examples, summary_examples

if TYPE_CHECKING:
    from macaron_local.hcp import Profile

MIXES: dict[str, tuple[str, ...]] = {  # role -> the data kinds (``<kind>.jsonl``) it learns
    "router": ("route",),
    "chat": ("chat",),
    "agent": ("agent",),
    "coding": ("code",),
    "genui": ("genui",),
}
# How many times a kind's rows enter a label's mix. The router sees ~4,400 routing rows; without
# this its few hundred chat rows were drowned and it answered chat turns with a bare label.
REPEAT: dict[str, int] = {"chat": 3, "summary": 2}


@dataclass(frozen=True)
class Built:
    """One label's bootstrap result."""

    label: str
    path: Path
    revision: str
    n_examples: int
    wall_s: float
    tokens_per_s: float
    final_loss: float


def with_system(examples: Iterable[Mapping[str, Any]], system: str) -> list[Example]:
    """Give every conversation without a system message the serving system prompt."""
    out = []
    for ex in examples:
        msgs = list(ex["messages"])
        if not msgs or msgs[0]["role"] != "system":
            msgs = [{"role": "system", "content": system}, *msgs]
        out.append({"messages": msgs})
    return out


def examples_from_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    label: str,
    profile: Profile,
    tools: Mapping[str, str] | None = None,
) -> list[Example]:
    """Any mix of rows -> conversations: ``{"text","label"}`` route rows, ``{"request",
    "answer","summary"}`` summary rows, ``{"messages"}`` conversations (given ``label``'s
    system prompt when they have none)."""
    route = [r for r in rows if "text" in r and "label" in r and "messages" not in r]
    summ = [r for r in rows if "summary" in r and "request" in r]
    convs = [r for r in rows if "messages" in r]
    if len(route) + len(summ) + len(convs) != len(rows):
        raise RefineError("a data row is neither a route row, a summary row nor a conversation")
    return (
        route_examples(route, profile, tools)
        + summary_examples(summ, profile, tools)
        + with_system(convs, profile.system_prompt(label, tools))
    )


def mix_kinds(profile: Profile, label: str) -> list[str]:
    """The data kinds (``<kind>.jsonl``) ``label`` learns, by its roles."""
    return [kind for role in profile.roles_of(label) for kind in MIXES.get(role, ())]


def label_examples(
    data_dir: Path, label: str, profile: Profile, tools: Mapping[str, str] | None = None
) -> list[Example]:
    """The training mix of ``label`` from the ``*.jsonl`` files in ``data_dir``."""
    rows: list[Mapping[str, Any]] = []
    kinds = mix_kinds(profile, label)
    router = "router" in profile.roles_of(label)  # only the router's mix needs rebalancing
    for kind in kinds:
        path = data_dir / f"{kind}.jsonl"
        if path.is_file():
            rows += load_jsonl(path) * (REPEAT.get(kind, 1) if router else 1)
    summary = data_dir / "summary.jsonl"
    if summary.is_file():
        own = [r for r in load_jsonl(summary) if r.get("label") == label]
        rows += own * (REPEAT["summary"] if router else 1)
    if not rows:
        raise RefineError(
            f"no training data for {label} in {data_dir}",
            hint=f"expected {', '.join(kinds) or 'its role'}.jsonl / summary.jsonl",
        )
    if not router:
        return examples_from_rows(rows, label=label, profile=profile, tools=tools)
    # the router's answers (chat, summaries) are what a continued run with
    # TrainConfig.kl_weight keeps close to the adapter it started from
    route = [r for r in rows if "text" in r and "label" in r and "messages" not in r]
    answers = [r for r in rows if not ("text" in r and "label" in r and "messages" not in r)]
    kept = examples_from_rows(answers, label=label, profile=profile, tools=tools)
    return examples_from_rows(route, label=label, profile=profile, tools=tools) + [
        {**ex, "anchor": True} for ex in kept
    ]


def replay_slice(
    label: str,
    profile: Profile,
    tools: Mapping[str, str],
    n: int,
    *,
    seed: int = 0,
    data_dir: Path | None = None,
) -> list[Example]:
    """``n`` examples drawn (seeded) from the label's own training mix in ``models/data`` (the
    rows bootstrap trains ``label`` on; only the drawn rows are converted), in equal shares per
    kind: the router's mix is three quarters routing rows, and a slice drawn in that proportion
    let a refine run keep routing but lose its answers (answer NLL +7.6% in bench/learn.py)."""
    from macaron_local import paths

    folder = data_dir or paths.bundled("models") / "data"
    if n <= 0 or not folder.is_dir():
        return []
    kinds: list[list[dict[str, Any]]] = [
        load_jsonl(folder / f"{kind}.jsonl")
        for kind in mix_kinds(profile, label)
        if (folder / f"{kind}.jsonl").is_file()
    ]
    if (folder / "summary.jsonl").is_file():
        kinds.append([r for r in load_jsonl(folder / "summary.jsonl") if r.get("label") == label])
    kinds = [rows for rows in kinds if rows]
    rng = random.Random(seed)
    drawn: list[dict[str, Any]] = []
    for i, rows in enumerate(kinds):  # n split evenly; a small kind gives its rest to the next
        share = (n - len(drawn)) // (len(kinds) - i)
        drawn += rng.sample(rows, min(share, len(rows)))
    return examples_from_rows(drawn, label=label, profile=profile, tools=tools)


def bootstrap(
    *,
    profile: Any,
    base: Path,
    base_sha256: str,
    data_dir: Path,
    out_dir: Path,
    manifest: Path | None,
    config: Any,
    labels: Sequence[str] | None = None,  # None: every label of the profile
    tools: Mapping[str, str] | None = None,  # None: the built-in tools serving describes
    cancel: threading.Event | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
    resume_from_shipped: bool = False,
    weights: Path | None = None,  # the base's training checkpoint folder, if it has one
    anchor: Path | None = None,
) -> list[Built]:
    """Train ``labels`` one after the other on one loaded base; register and ship each.

    With ``resume_from_shipped`` each label starts from the adapter the manifest ships now (its
    parent revision) instead of a fresh LoRA: more steps without paying for the first ones again.
    With ``config.kl_weight`` the router's answer rows keep close to ``anchor`` (a GGUF LoRA;
    default: the shipped adapter the run starts from).
    """
    from macaron_local import lineage
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.train import train
    from macaron_local.turns.tools import tool_descriptions

    tools = tool_descriptions() if tools is None else tools
    labels = tuple(labels or profile.labels)
    mixes = {lb: label_examples(data_dir, lb, profile, tools) for lb in labels}
    model = load_base(base, weights=weights)
    tok = shared_tokenizer(base)
    out_dir.mkdir(parents=True, exist_ok=True)
    parents = _manifest_revisions(manifest)
    shipped = _manifest_files(manifest) if resume_from_shipped else {}
    built = []
    for label in labels:
        init = shipped.get(label)
        start = f"from {parents[label][:12]}" if init else "from a fresh LoRA"
        echo(f"{label}: {len(mixes[label])} examples, {start}")
        res = train(
            mixes[label],
            model=model,
            tokenizer=tok,
            out=out_dir / f"{label}.gguf",
            label=label,
            base_sha256=base_sha256,
            config=config,
            parent=parents.get(label),
            profile_hash=profile.contract_hash_for(label),
            cancel=cancel,
            progress=progress,
            init=init,
            anchor=anchor,
        )
        if res.path is None:
            raise RefineError(f"bootstrap cancelled while training {label}")
        final = sum(res.losses[-10:]) / len(res.losses[-10:])
        rev = lineage.register_revision(
            res.path,
            label=label,
            parent=parents.get(label),
            base_sha256=base_sha256,
            data_hash=res.data_hash,
            profile_hash=profile.contract_hash_for(label),
            config=config.model_dump(mode="json"),
            metrics={
                "final_loss": round(final, 5),
                "steps": res.steps,
                "tokens_per_s": round(res.tokens_per_s, 1),
                "wall_s": round(res.wall_s, 1),
            },
        )
        # the lineage record ships beside the bundled file (serving reads its profile_hash)
        res.path.with_suffix(".json").write_text(rev.model_dump_json(indent=1))
        built.append(
            Built(
                label,
                res.path,
                rev.revision,
                len(mixes[label]),
                res.wall_s,
                res.tokens_per_s,
                final,
            )
        )
        if manifest is not None:
            role = profile.adapters[label].role if label in profile.adapters else label
            update_manifest(manifest, _entry(manifest, res.path, rev, role, config))
    return built


def _entry(manifest: Path, path: Path, rev: Any, role: str, config: Any) -> dict[str, Any]:
    try:
        file = path.resolve().relative_to(manifest.resolve().parent).as_posix()
    except ValueError:
        file = str(path.resolve())
    return {
        "label": rev.label,
        "role": role,
        "file": file,
        "sha256": rev.revision,
        "size": rev.size,
        "rank": config.rank,
        "alpha": float(config.alpha),
        "targets": list(config.targets),
        "base_sha256": rev.base_sha256 or "",
        "revision": rev.revision,
    }


def _manifest_revisions(manifest: Path | None) -> dict[str, str]:
    if manifest is None or not manifest.is_file():
        return {}
    from macaron_local.manifests import load_manifest

    return {a.label: a.revision for a in load_manifest(manifest).adapters}


def _manifest_files(manifest: Path | None) -> dict[str, Path]:
    """label -> the shipped adapter file (read fully before training overwrites it)."""
    if manifest is None or not manifest.is_file():
        return {}
    from macaron_local.manifests import load_manifest

    out = {}
    for a in load_manifest(manifest).adapters:
        path = Path(a.file) if Path(a.file).is_absolute() else manifest.parent / a.file
        if path.is_file():
            out[a.label] = path
    return out


def update_manifest(manifest: Path, entry: Mapping[str, Any]) -> None:
    """Replace (or add) the ``[[adapters]]`` entry of ``entry["label"]``, keeping the rest of
    the file and its comments; the result is validated before it replaces the file."""
    import tomli_w

    from macaron_local.manifests import load_manifest

    text = manifest.read_text(encoding="utf-8")
    current = load_manifest(manifest)
    head = text.split("\n[[adapters]]", 1)[0].rstrip("\n") + "\n"
    if text.startswith("[[adapters]]"):
        head = ""
    adapters = [a.model_dump(mode="json") for a in current.adapters if a.label != entry["label"]]
    adapters = sorted([*adapters, dict(entry)], key=lambda a: a["label"])
    body = tomli_w.dumps({"adapters": adapters})
    tmp = manifest.with_name(f".{manifest.name}.tmp")
    tmp.write_text(head + "\n" + body, encoding="utf-8")
    try:
        load_manifest(tmp)
    except Exception:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(manifest)
