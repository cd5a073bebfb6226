"""Supervised LoRA training on the frozen base, loss on assistant tokens only.

Owns :class:`TrainConfig`, batching (seeded shuffle, length buckets, right padding), the
optimisation loop (AdamW on the LoRA parameters, the schedule of :mod:`.trainer`, gradient
clipping, bf16 autocast on CPU), the console progress bar, cancellation between steps, trainer
checkpoints (:func:`.trainer.save_state`, in the cache) and the run record (``<out>.run.json``
and ``<out>.loss.png`` beside the exported GGUF). Must not touch the lineage
store or the manifests: callers register what this returns.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from macaron_local.engine.lora_io import BASE_SHA_KEY, LABEL_KEY, REVISION_KEY
from macaron_local.errors import RefineError
from macaron_local.refine.data import Encoded, Example, data_hash, encode_turns
from macaron_local.refine.lora import (
    ALL_LINEAR,
    LoraConfig,
    attach_lora,
    detach_lora,
    export_lora,
    import_lora,
)
from macaron_local.refine.trainer import lr_at, save_state, set_lr, state_dir


class TrainConfig(BaseModel):
    """Everything that decides the trained weights (recorded with every revision)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: Annotated[int, Field(ge=1, le=1024)] = 16
    alpha: Annotated[float, Field(gt=0)] = 32.0
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.0
    targets: tuple[str, ...] = ALL_LINEAR
    lr: Annotated[float, Field(gt=0, le=1)] = 5e-4
    weight_decay: Annotated[float, Field(ge=0)] = 0.0
    warmup_steps: Annotated[int, Field(ge=0)] = 10
    grad_clip: Annotated[float, Field(ge=0)] = 1.0
    steps: Annotated[int, Field(ge=1)] = 300
    epochs: Annotated[float, Field(gt=0)] | None = None  # when set: steps = epochs * n / batch
    batch_size: Annotated[int, Field(ge=1)] = 16
    max_len: Annotated[int, Field(ge=8)] = 1024
    seed: int = 0
    bf16: bool = True
    export_dtype: Literal["f32", "f16"] = "f16"
    share_prefix: bool = True  # run a batch's common system prompt once (same loss, faster)
    checkpoint_every: Annotated[int, Field(ge=0)] = 0  # 0: no trainer checkpoints
    # KL(anchor adapter || current) per target token on the examples marked ``anchor``, added to
    # their cross-entropy at this weight: continued training that must keep those answers
    kl_weight: Annotated[float, Field(ge=0)] = 0.0

    def lora(self) -> LoraConfig:
        return LoraConfig(
            rank=self.rank, alpha=self.alpha, dropout=self.dropout, targets=self.targets
        )

    def total_steps(self, n_examples: int) -> int:
        if self.epochs is None:
            return self.steps
        return max(1, math.ceil(self.epochs * n_examples / self.batch_size))

    def fingerprint(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


@dataclass
class TrainResult:
    """What a run produced. ``path`` is None when the run was cancelled."""

    label: str
    status: Literal["done", "cancelled"]
    path: Path | None
    run_json: Path
    loss_png: Path
    run_id: str
    data_hash: str
    losses: list[float] = field(default_factory=list)
    step_s: list[float] = field(default_factory=list)  # wall time of each step
    steps: int = 0
    tokens: int = 0
    wall_s: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.wall_s if self.wall_s else 0.0


def encode_all(tok: Any, examples: Sequence[Example], max_len: int) -> list[Encoded]:
    out = [e for ex in examples for e in encode_turns(tok, ex, max_len)]
    if not out:
        raise RefineError(
            f"no example has an assistant token within max_len ({max_len} tokens): the prompts "
            "are longer than that",
            hint="raise --max-len (the router's prompt alone is about 200 tokens)",
        )
    return out


def batches(n: int, batch_size: int, keys: Sequence[tuple[str, int]], seed: int) -> Any:
    """Endless index batches: a seeded shuffle per epoch, sorted by (system prompt, length)
    inside buckets of 16 batches (shared prefixes, less padding), then the batches shuffled."""
    rng = random.Random(seed)
    bucket = batch_size * 16
    while True:
        order = list(range(n))
        rng.shuffle(order)
        epoch: list[list[int]] = []
        for i in range(0, n, bucket):
            chunk = sorted(order[i : i + bucket], key=lambda j: keys[j])
            epoch += [chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size)]
        rng.shuffle(epoch)
        yield from epoch


def collate(items: Sequence[Encoded]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded tokens (B, T) and targets (B, T); padding is never a target."""
    t = max(len(e.tokens) for e in items)
    tokens = torch.zeros(len(items), t, dtype=torch.long)
    targets = torch.zeros(len(items), t, dtype=torch.bool)
    for i, e in enumerate(items):
        tokens[i, : len(e.tokens)] = torch.tensor(e.tokens)
        targets[i, : len(e.targets)] = torch.tensor(e.targets)
    return tokens, targets


def shared_prefix(items: Sequence[Encoded], min_len: int = 8) -> int:
    """How many leading tokens every item shares, stopping before the token that predicts the
    first target (0 when not worth it)."""
    if len(items) < 2:
        return 0
    first = min(e.targets.index(True) for e in items) - 1
    ref = items[0].tokens
    n = 0
    limit = min(first, *(len(e.tokens) for e in items))
    while n < limit and all(e.tokens[n] == ref[n] for e in items):
        n += 1
    return n if n >= min_len else 0


def loss_on_targets(
    model: Any, tokens: torch.Tensor, targets: torch.Tensor, bf16: bool, prefix_len: int = 0
) -> torch.Tensor:
    """Mean next-token cross-entropy over target tokens only (logits only where needed).

    With ``prefix_len`` > 0 the first ``prefix_len`` tokens (identical in every row, no target
    among them or right after them) run once for the whole batch.
    """
    logits = target_logits(model, tokens, targets, bf16, prefix_len)
    return F.cross_entropy(
        logits.float(), tokens[:, prefix_len + 1 :][targets[:, prefix_len + 1 :]]
    )


def target_logits(
    model: Any, tokens: torch.Tensor, targets: torch.Tensor, bf16: bool, prefix_len: int = 0
) -> torch.Tensor:
    """The logits that predict each target token, (number of targets, vocab), in row order."""
    prefix = tokens[0, :prefix_len] if prefix_len else None
    tokens, targets = tokens[:, prefix_len:], targets[:, prefix_len:]
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        hidden = model.hidden(tokens, prefix=prefix)
        return model.logits(hidden[:, :-1][targets[:, 1:]])


def by_prompt(batch: Sequence[Encoded]) -> Iterator[tuple[list[Encoded], float]]:
    """The batch in groups that share a system prompt (their prefix runs once), each with its
    share of the batch's target tokens."""
    groups: dict[str, list[Encoded]] = {}
    for e in batch:
        groups.setdefault(e.group, []).append(e)
    total = sum(e.n_targets for e in batch)
    for items in groups.values():
        yield items, sum(e.n_targets for e in items) / total


def sft_loss(
    model: Any,
    batch: Sequence[Encoded],
    bf16: bool,
    anchor: tuple[Sequence[torch.nn.Parameter], Sequence[torch.Tensor]] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Target-token cross-entropy, batched by system prompt (shared prefix), token-weighted.

    With ``anchor`` (the trained parameters and the values they had when the run started) also
    the mean KL(start || current) per target token, from the same logits plus one no-grad pass
    with the starting values swapped in. Returns (cross-entropy, KL or None).
    """
    ce, kl = torch.zeros(()), torch.zeros(()) if anchor else None
    for items, share in by_prompt(batch):
        tokens, targets = collate(items)
        p = shared_prefix(items)
        logits = target_logits(model, tokens, targets, bf16, p).float()
        ce = ce + share * F.cross_entropy(logits, tokens[:, p + 1 :][targets[:, p + 1 :]])
        if anchor and kl is not None:
            ref = _start_logprobs(model, tokens, targets, bf16, p, *anchor)
            cur = F.log_softmax(logits, -1)
            kl = kl + share * (ref.exp() * (ref - cur)).sum(-1).mean()
    return ce, kl


def _start_logprobs(
    model: Any,
    tokens: torch.Tensor,
    targets: torch.Tensor,
    bf16: bool,
    prefix_len: int,
    params: Sequence[torch.nn.Parameter],
    start: Sequence[torch.Tensor],
) -> torch.Tensor:
    now = [q.data for q in params]
    try:
        for q, old in zip(params, start, strict=True):
            q.data = old
        with torch.no_grad():
            return F.log_softmax(
                target_logits(model, tokens, targets, bf16, prefix_len).float(), -1
            )
    finally:
        for q, cur in zip(params, now, strict=True):
            q.data = cur


def run_id_for(label: str, cfg: TrainConfig, dhash: str, base_sha: str, parent: str | None) -> str:
    key = f"{label}|{cfg.fingerprint()}|{dhash}|{base_sha}|{parent or ''}"
    return f"{label}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def train(
    examples: Sequence[Example],
    *,
    model: Any,
    tokenizer: Any,
    out: Path | str,
    label: str,
    base_sha256: str,
    config: TrainConfig | None = None,
    arch: str = "llama",
    parent: str | None = None,
    profile_hash: str | None = None,
    cancel: threading.Event | None = None,
    progress: bool = True,
    init: Path | None = None,
    anchor: Path | None = None,
) -> TrainResult:
    """Train a LoRA for ``label`` on ``examples`` and export it to ``out`` (GGUF).

    ``init`` (a GGUF LoRA, normally the parent revision's file) starts from that adapter's
    tensors, rank and alpha instead of a fresh LoRA: continued training. With
    ``cfg.kl_weight`` the examples marked ``"anchor": true`` also pay KL(anchor || current),
    the anchor being ``anchor`` (a GGUF LoRA of the same shapes) or else ``init``.

    ``model`` is a frozen base from :func:`macaron_local.refine.arch.load_base`; the LoRA is
    detached again before returning, so one base serves several runs. Deterministic for a
    seed on one machine and thread count. A set ``cancel`` event stops between steps: nothing
    is exported, the record says ``cancelled``.
    """
    cfg = config or TrainConfig()
    out = Path(out)
    dhash = data_hash(examples)
    run_id = run_id_for(label, cfg, dhash, base_sha256, parent)
    encoded = encode_all(tokenizer, examples, cfg.max_len)
    torch.manual_seed(cfg.seed)
    kept = _anchor_values(model, anchor or init) if _anchored(cfg, encoded) else None
    if init is not None:
        import_lora(model, init)
    else:
        attach_lora(model, cfg.lora(), seed=cfg.seed)
    model.train()
    try:
        ref = _anchor(model, kept) if kept is not None else None
        result = _loop(model, encoded, cfg, label, run_id, dhash, out, cancel, progress, ref)
        if result.status == "done":
            meta = {BASE_SHA_KEY: base_sha256, LABEL_KEY: label, REVISION_KEY: run_id}
            result.path = export_lora(model, out, arch=arch, metadata=meta, dtype=cfg.export_dtype)
    finally:
        model.eval()
        detach_lora(model)
    record = {
        "run_id": run_id,
        "label": label,
        "status": result.status,
        "output": str(result.path) if result.path else None,
        "base_sha256": base_sha256,
        "parent": parent,
        "profile_hash": profile_hash,
        "data_hash": dhash,
        "n_examples": len(examples),
        "n_encoded": len(encoded),
        "n_inexact": sum(not e.exact for e in encoded),
        "n_target_tokens": sum(e.n_targets for e in encoded),
        "n_anchored": sum(e.anchor for e in encoded) if kept is not None else 0,
        "anchor": str(anchor or init) if kept is not None else None,
        "config": cfg.model_dump(mode="json"),
        "steps": result.steps,
        "tokens": result.tokens,
        "wall_s": round(result.wall_s, 3),
        "tokens_per_s": round(result.tokens_per_s, 1),
        "losses": result.losses,
        "step_s": result.step_s,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }
    result.run_json.write_text(json.dumps(record, indent=1))
    plot_losses(result.losses, result.loss_png, title=f"{label} ({run_id})")
    return result


def _anchored(cfg: TrainConfig, encoded: Sequence[Encoded]) -> bool:
    return bool(cfg.kl_weight) and any(e.anchor for e in encoded)


def _anchor_values(model: Any, path: Path | None) -> list[torch.Tensor]:
    """The LoRA tensors of the adapter at ``path`` in the model's parameter order."""
    if path is None:
        raise RefineError(
            "kl_weight keeps the answers of a starting adapter, and this run has none",
            hint="continue from an adapter (--resume-from-shipped) or leave kl_weight at 0",
        )
    import_lora(model, path)
    try:
        return [p.detach().clone() for p in model.parameters() if p.requires_grad]
    finally:
        detach_lora(model)


def _anchor(
    model: Any, values: list[torch.Tensor]
) -> tuple[list[torch.nn.Parameter], list[torch.Tensor]]:
    """(the trained parameters, the anchor's values for them), checked to match."""
    params = [p for p in model.parameters() if p.requires_grad]
    if [p.shape for p in params] != [v.shape for v in values]:
        raise RefineError(
            "the anchor adapter's rank or targets differ from the adapter being trained",
            hint="anchor to the adapter training starts from, or one trained with its config",
        )
    return params, values


def _batch_loss(
    model: Any,
    batch: Sequence[Encoded],
    cfg: TrainConfig,
    ref: tuple[list[torch.nn.Parameter], list[torch.Tensor]] | None,
) -> torch.Tensor:
    """Cross-entropy on the batch's targets, plus ``kl_weight`` x KL to the anchor on the
    anchored examples' targets (weighted by their share of the batch's target tokens)."""
    kept = [e for e in batch if e.anchor] if ref is not None else []
    if not kept:
        p = shared_prefix(batch) if cfg.share_prefix else 0
        tokens, targets = collate(batch)
        return loss_on_targets(model, tokens, targets, cfg.bf16, p)
    rest = [e for e in batch if not e.anchor]
    share = sum(e.n_targets for e in kept) / sum(e.n_targets for e in batch)
    ce, kl = sft_loss(model, kept, cfg.bf16, ref)
    loss = share * (ce + cfg.kl_weight * (kl if kl is not None else 0.0))
    if rest:
        tokens, targets = collate(rest)
        p = shared_prefix(rest) if cfg.share_prefix else 0
        loss = loss + (1 - share) * loss_on_targets(model, tokens, targets, cfg.bf16, p)
    return loss


def _loop(
    model: Any,
    encoded: list[Encoded],
    cfg: TrainConfig,
    label: str,
    run_id: str,
    dhash: str,
    out: Path,
    cancel: threading.Event | None,
    progress: bool,
    ref: tuple[list[torch.nn.Parameter], list[torch.Tensor]] | None = None,
) -> TrainResult:
    from tqdm import tqdm

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    keys = [(e.group, len(e.tokens)) for e in encoded]
    feed = batches(len(encoded), cfg.batch_size, keys, cfg.seed)
    res = TrainResult(
        label=label,
        status="done",
        path=None,
        run_id=run_id,
        data_hash=dhash,
        run_json=out.with_name(f"{out.stem}.run.json"),
        loss_png=out.with_name(f"{out.stem}.loss.png"),
    )
    total = cfg.total_steps(len(encoded))
    started = time.perf_counter()
    bar = tqdm(
        total=total, desc=f"train {label}", unit="step", disable=not progress, dynamic_ncols=True
    )
    for step in range(total):
        if cancel is not None and cancel.is_set():
            res.status = "cancelled"
            break
        batch = [encoded[i] for i in next(feed)]
        t_step = time.perf_counter()
        set_lr(opt, lr_at(step, peak=cfg.lr, warmup=cfg.warmup_steps, total=total))
        loss = _batch_loss(model, batch, cfg, ref)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        res.losses.append(round(loss.item(), 5))
        res.step_s.append(round(time.perf_counter() - t_step, 3))
        res.steps = step + 1
        res.tokens += sum(len(e.tokens) for e in batch)
        res.wall_s = time.perf_counter() - started
        bar.set_postfix(loss=f"{res.losses[-1]:.4f}", tok_s=f"{res.tokens_per_s:.0f}")
        bar.update(1)
        if cfg.checkpoint_every and res.steps % cfg.checkpoint_every == 0:
            save_state(state_dir(run_id) / "checkpoint.pt", model, opt, {"step": res.steps})
    bar.close()
    res.wall_s = time.perf_counter() - started
    return res


def plot_losses(losses: Sequence[float], path: Path, *, title: str) -> Path:
    """A loss-curve PNG (raw loss and a moving average)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
    steps = range(1, len(losses) + 1)
    ax.plot(steps, losses, lw=0.8, alpha=0.5, label="loss")
    k = max(1, len(losses) // 20)
    if len(losses) >= 2 * k > 1:
        avg = [
            sum(losses[max(0, i - k + 1) : i + 1]) / len(losses[max(0, i - k + 1) : i + 1])
            for i in range(len(losses))
        ]
        ax.plot(steps, avg, lw=1.5, label=f"mean of {k}")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (assistant tokens)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
