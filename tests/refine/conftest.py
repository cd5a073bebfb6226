"""Refine fixtures: one F32 copy of the embedded base per session, its torch model and engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    """One intra-op thread: on a shared 2-core machine two threads spin against other jobs and
    run several times slower; the tensors here are small enough that one thread is plenty."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def base_weights(model_path: Path) -> Any:
    """The embedded Q4_1 base dequantized to f32 numpy arrays (once per session)."""
    from macaron_local.refine.weights import read_weights

    return read_weights(model_path)


@pytest.fixture(scope="session")
def f32_base(model_path: Path, base_weights: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same weights as an F32 GGUF (written once per session), for llama.cpp."""
    from macaron_local.refine.weights import write_f32_copy

    dst = tmp_path_factory.mktemp("f32") / "base-f32.gguf"
    return write_f32_copy(model_path, dst, weights=base_weights)


@pytest.fixture(scope="session")
def torch_base(base_weights: Any) -> Any:
    """The frozen torch model of those weights (tests attach and detach LoRAs on it)."""
    from macaron_local.refine.arch import build

    return build(base_weights)


@pytest.fixture(scope="session")
def f32_engine(f32_base: Path) -> Iterator[Any]:
    """llama.cpp on the F32 base with flash attention off and an F32 KV cache."""
    from macaron_local.engine.engine import Engine, EngineConfig

    with Engine(f32_base, EngineConfig(n_ctx=512, flash_attn=False, kv_type="f32")) as engine:
        yield engine


@pytest.fixture(scope="session")
def tokenizer(model_path: Path) -> Any:
    from macaron_local.engine.tokenizer import shared_tokenizer

    return shared_tokenizer(model_path)


@pytest.fixture
def model(torch_base: Any) -> Iterator[Any]:
    """The shared torch base, guaranteed LoRA-free before and after the test."""
    from macaron_local.refine.lora import detach_lora, lora_modules

    detach_lora(torch_base)
    yield torch_base
    if lora_modules(torch_base):
        detach_lora(torch_base)
