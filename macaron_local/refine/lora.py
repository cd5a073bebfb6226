"""LoRA modules on a frozen GGUF-space torch model, and their GGUF export/import.

Owns :class:`LoraConfig` (rank, alpha, dropout, target patterns), wrapping the chosen frozen
:class:`~macaron_local.refine.arch.llama.Linear` modules in :class:`LoraLinear`
(``y = W x + alpha/rank * B A x``, A Kaiming-uniform as in PEFT, B zero, so a fresh adapter is an
exact no-op), and the exact conversion to and from the GGUF LoRA format of
:mod:`macaron_local.engine.lora_io`: A (rank, in) and B (out, rank) under the base tensor's name,
no transposes, no permutation. Must not know about data or training loops.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from macaron_local.engine.lora_io import LoraFile, read_lora, write_lora
from macaron_local.errors import RefineError
from macaron_local.refine.arch.llama import LINEARS, Linear
from macaron_local.refine.hf import HFBase

ALL_LINEAR: tuple[str, ...] = LINEARS


class LoraConfig(BaseModel):
    """Which tensors get a LoRA and how big it is.

    ``targets`` are patterns: a bare name (``attn_q``) matches that tensor in every layer; a
    pattern with a dot or a wildcard (``blk.1?.ffn_*``) is matched against the module name
    (``blk.12.ffn_up``) and the tensor name (``blk.12.ffn_up.weight``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: Annotated[int, Field(ge=1, le=1024)] = 16
    alpha: Annotated[float, Field(gt=0)] = 32.0
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.0
    targets: tuple[str, ...] = ALL_LINEAR

    @property
    def scale(self) -> float:
        return self.alpha / self.rank

    def matches(self, module_name: str) -> bool:
        short = module_name.rsplit(".", 1)[-1]
        for pat in self.targets:
            if "." in pat or any(c in pat for c in "*?["):
                if fnmatch.fnmatchcase(module_name, pat) or fnmatch.fnmatchcase(
                    f"{module_name}.weight", pat
                ):
                    return True
            elif short == pat:
                return True
        return False


class LoraLinear(nn.Module):
    """A frozen :class:`Linear` plus a trainable low-rank update."""

    def __init__(
        self,
        base: Linear,
        rank: int,
        alpha: float,
        dropout: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.base = base
        self.rank, self.alpha = rank, alpha
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5), generator=generator)
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    @property
    def scale(self) -> float:
        return self.alpha / self.rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        update = F.linear(F.linear(self.dropout(x), self.lora_a), self.lora_b)
        return self.base(x) + self.scale * update


def _parent(model: nn.Module, name: str) -> tuple[nn.Module, str]:
    parent_name, _, attr = name.rpartition(".")
    return model.get_submodule(parent_name) if parent_name else model, attr


def attach_lora(
    model: nn.Module | HFBase, config: LoraConfig, *, seed: int = 0
) -> dict[str, LoraLinear]:
    """Wrap every matching frozen Linear of ``model``; returns GGUF tensor name -> module."""
    if isinstance(model, HFBase):  # a transformers base: peft does the wrapping
        return model.attach_lora(config, seed=seed)
    if lora_modules(model):
        raise RefineError("the model already carries a LoRA; detach it first")
    gen = torch.Generator().manual_seed(seed)
    chosen = [n for n, m in model.named_modules() if isinstance(m, Linear) and config.matches(n)]
    if not chosen:
        raise RefineError(f"no tensor matches the LoRA targets {list(config.targets)}")
    out: dict[str, LoraLinear] = {}
    for name in chosen:
        parent, attr = _parent(model, name)
        wrapped = LoraLinear(getattr(parent, attr), config.rank, config.alpha, config.dropout, gen)
        setattr(parent, attr, wrapped)
        out[f"{name}.weight"] = wrapped
    return out


def lora_modules(model: nn.Module) -> dict[str, LoraLinear]:
    """The LoRA modules of ``model`` by GGUF tensor name (``blk.0.attn_q.weight``)."""
    if isinstance(model, HFBase):
        return model.lora_modules()
    return {f"{n}.weight": m for n, m in model.named_modules() if isinstance(m, LoraLinear)}


def detach_lora(model: nn.Module) -> None:
    """Put the plain frozen Linear modules back (the base is untouched by training)."""
    if isinstance(model, HFBase):
        return model.detach_lora()
    for tensor_name, module in lora_modules(model).items():
        parent, attr = _parent(model, tensor_name.removesuffix(".weight"))
        setattr(parent, attr, module.base)


def lora_tensors(model: nn.Module) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Current (A, B) of every LoRA as float32 numpy arrays, GGUF orientation."""
    if isinstance(model, HFBase):
        return model.lora_tensors()
    return {
        name: (m.lora_a.detach().float().numpy().copy(), m.lora_b.detach().float().numpy().copy())
        for name, m in lora_modules(model).items()
    }


def export_lora(
    model: nn.Module,
    path: Path | str,
    *,
    arch: str = "llama",
    metadata: Mapping[str, str] | None = None,
    dtype: Literal["f32", "f16"] = "f32",
) -> Path:
    """Write the model's LoRA as a GGUF adapter that llama.cpp loads as-is."""
    if isinstance(model, HFBase):  # it knows its own architecture
        return model.export_lora(path, metadata=dict(metadata or {}), dtype=dtype)
    mods = lora_modules(model)
    if not mods:
        raise RefineError("the model has no LoRA to export")
    alphas = {m.alpha / m.rank for m in mods.values()}
    ranks = {m.rank for m in mods.values()}
    if len(alphas) != 1 or len(ranks) != 1:
        raise RefineError("GGUF LoRA files hold one alpha and rank for all tensors")
    alpha = next(iter(mods.values())).alpha
    return write_lora(
        path, lora_tensors(model), alpha=alpha, arch=arch, dtype=dtype, metadata=metadata
    )


def import_lora(model: nn.Module, source: Path | str | LoraFile) -> LoraConfig:
    """Attach the adapter in ``source`` to ``model`` with its exact tensors; returns its config."""
    if isinstance(model, HFBase):
        return model.import_lora(source)
    lora = source if isinstance(source, LoraFile) else read_lora(source)
    rank = lora.rank
    alpha = lora.alpha or float(rank)  # llama.cpp: alpha 0 means scale 1
    config = LoraConfig(
        rank=rank, alpha=alpha, targets=tuple(n.removesuffix(".weight") for n in lora.targets)
    )
    mods = attach_lora(model, config)
    missing = sorted(set(lora.tensors) - set(mods))
    if missing:
        detach_lora(model)
        raise RefineError(f"{lora.path.name}: the model has no tensor {missing[0]}")
    with torch.no_grad():
        for name, (a, b) in lora.tensors.items():
            if mods[name].lora_a.shape != a.shape or mods[name].lora_b.shape != b.shape:
                detach_lora(model)
                raise RefineError(f"{lora.path.name}: {name} has shapes {a.shape}, {b.shape}")
            mods[name].lora_a.copy_(torch.from_numpy(np.array(a, dtype=np.float32)))
            mods[name].lora_b.copy_(torch.from_numpy(np.array(b, dtype=np.float32)))
    return config
