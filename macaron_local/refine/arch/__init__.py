"""Architecture registry: GGUF ``general.architecture`` -> a torch model builder.

Owns the mapping from architecture name to the module that builds a frozen torch model from
f32 GGUF weights (``from_weights(GGUFWeights) -> nn.Module``). Every model it returns exposes
``hidden(tokens)``, ``logits(hidden)`` and modules named like the GGUF tensors they hold, which
is all that LoRA and training rely on. Add an architecture by adding one module and one line.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from macaron_local.errors import RefineError

ARCHITECTURES: dict[str, str] = {
    "llama": "macaron_local.refine.arch.llama",
}


def supported() -> list[str]:
    return sorted(ARCHITECTURES)


def build(weights: Any) -> Any:
    """A frozen torch model for ``weights`` (:class:`~macaron_local.refine.weights.GGUFWeights`)."""
    module = ARCHITECTURES.get(weights.arch)
    if module is None:
        raise RefineError(
            f"{weights.path.name}: architecture {weights.arch!r} has no torch model "
            f"(supported: {', '.join(supported())})"
        )
    return importlib.import_module(module).from_weights(weights)


def load_base(
    path: Path | str,
    *,
    stop_if: Callable[[], bool] | None = None,
    weights: Path | None = None,
) -> Any:
    """The frozen torch model of a GGUF base: the GGUF-space model for the architectures here
    (``stop_if`` is asked before each tensor is read), else a transformers model
    (:class:`~macaron_local.refine.hf.HFBase`) for any architecture transformers reads. With
    ``weights`` (the folder of the base's own training checkpoint) transformers loads those
    instead of dequantizing the GGUF, whatever the architecture."""
    from macaron_local.engine.gguf_model import inspect_model
    from macaron_local.refine.weights import read_weights

    arch = inspect_model(path).arch  # the cached header: a bad file is a named error too
    if arch in ARCHITECTURES and weights is None:  # GGUF space: exact parity with llama.cpp
        return build(read_weights(path, stop_if=stop_if))
    from macaron_local.refine.hf import HFBase, hf_architectures

    if arch not in hf_architectures():  # said before gigabytes are dequantized, not after
        raise RefineError(
            f"{Path(path).name}: architecture {arch!r} has no torch model "
            f"(supported: {', '.join(sorted({*supported(), *hf_architectures()}))})"
        )
    return HFBase.load(Path(path), arch, weights=weights)
