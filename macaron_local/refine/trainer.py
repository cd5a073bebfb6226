"""The trainer core both training loops share: ``train`` (bootstrap) and ``refine run``.

Owns the learning-rate schedule (linear warmup, then cosine decay to a tenth of the peak) and the
trainer state on disk: the trainable (LoRA) parameters, the optimizer's state and the loop's own
progress, written atomically under ``<cache>/refine/<run_id>/``, never beside served adapters.
Must not know what a loop trains on or how it measures it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from macaron_local import paths


def lr_at(step: int, *, peak: float, warmup: int, total: int) -> float:
    """The learning rate of ``step`` (0-based) of ``total``."""
    if step < warmup:
        return peak * (step + 1) / warmup
    span = max(1, total - warmup)
    return peak * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - warmup) / span)))


def set_lr(opt: torch.optim.Optimizer, lr: float) -> None:
    for group in opt.param_groups:
        group["lr"] = lr


def state_dir(run_id: str) -> Path:
    """Where a run's trainer state lives: the cache, never beside served adapters."""
    return paths.cache_dir() / "refine" / run_id


def save_state(
    path: Path, model: torch.nn.Module, opt: torch.optim.Optimizer, progress: Mapping[str, Any]
) -> Path:
    """Write the trainable parameters, the optimizer and ``progress`` to ``path`` (tmp + rename:
    a crash leaves the previous state)."""
    paths.ensure(path.parent)
    lora = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    tmp = path.with_name(f"{path.name}.part")
    torch.save({"lora": lora, "optimizer": opt.state_dict(), "progress": dict(progress)}, tmp)
    tmp.replace(path)
    return path


def load_state(path: Path, model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict[str, Any]:
    """Restore what :func:`save_state` wrote into ``model`` and ``opt``; returns the progress."""
    saved = torch.load(path, weights_only=False)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name in saved["lora"]:
                p.copy_(saved["lora"][name])
    opt.load_state_dict(saved["optimizer"])
    return dict(saved["progress"])
