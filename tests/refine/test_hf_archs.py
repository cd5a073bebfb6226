"""The transformers + peft backend on qwen2, qwen3 and qwen3moe: a LoRA it trains is one
llama.cpp serves the same way.

Each base is a tiny random model built here from a config (:mod:`tests.refine.tiny_hf`: the
first 2048 tokens of the embedded model's tokenizer, no download), written as an F32 GGUF that
:class:`HFBase` loads back through transformers' GGUF reader and llama.cpp serves (F32 KV, no
flash attention): the two agree on the base's logits and, with a random LoRA on every linear
layer the backend supports (attention and, for the dense archs, the MLP; never the fused MoE
experts), on the LoRA's, to float precision.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.refine.helpers import CHAT
from tests.refine.tiny_hf import ARCHS, LAYERS, build_base

pytest.importorskip("peft")

ATTENTION = ("attn_q", "attn_k", "attn_v", "attn_output")
MLP = ("ffn_gate", "ffn_up", "ffn_down")


def _random_lora(model: Any, seed: int = 3, scale: float = 0.1) -> None:
    """A LoRA on every linear layer, with random A and B (a fresh one is an exact no-op)."""
    from macaron_local.refine.lora import ALL_LINEAR, LoraConfig, attach_lora

    attach_lora(model, LoraConfig(rank=4, alpha=8.0, targets=ALL_LINEAR), seed=seed)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.copy_(torch.randn(p.shape, generator=gen) * scale)


def _logits(model: Any, tokens: list[int]) -> np.ndarray:
    with torch.no_grad():
        return model.logits(model.hidden(torch.tensor([tokens])))[0].float().numpy()


@pytest.mark.parametrize("arch", ARCHS)
def test_a_lora_on_a_tiny_base_serves_as_it_trains(
    arch: str, model_path: Path, tmp_path: Path
) -> None:
    from macaron_local.engine.engine import Engine, EngineConfig
    from macaron_local.engine.lora_io import read_lora
    from macaron_local.refine.hf import HFBase
    from macaron_local.refine.lora import detach_lora, export_lora

    source, base = build_base(arch, tmp_path / f"tiny-{arch}.gguf", model_path)
    model = HFBase.load(base, arch, on="cpu")
    config = EngineConfig(n_ctx=256, n_threads=1, flash_attn=False, kv_type="f32")
    with Engine(base, config) as engine:
        assert engine.info.arch == arch
        tokens = engine.chat_tokens(CHAT["messages"])
        base_cpp = engine.eval_logits(tokens, all_positions=True)
        base_torch = _logits(model, tokens)
        with torch.no_grad():  # the GGUF holds the source model exactly
            direct = source(torch.tensor([tokens])).logits[0].numpy()
        _random_lora(model)
        ours = _logits(model, tokens)
        path = export_lora(model, tmp_path / f"lora-{arch}.gguf", metadata={})
        detach_lora(model)
        engine.load_adapter("hf", path)
        theirs = engine.eval_logits(tokens, adapter="hf", all_positions=True)
    lora = read_lora(path)
    layers = ATTENTION if arch == "qwen3moe" else ATTENTION + MLP  # fused experts left out
    assert lora.arch == arch
    assert sorted(lora.targets) == sorted(
        f"blk.{i}.{t}.weight" for i in range(LAYERS) for t in layers
    )
    np.testing.assert_array_equal(_logits(model, tokens), base_torch)  # detached: the base
    scale = np.abs(base_torch).max()
    facts = {
        "base": float(np.abs(base_torch - base_cpp).max()),
        "lora": float(np.abs(ours - theirs).max()),
        "lora_effect": float(np.abs(ours - base_torch).max()),
        "scale": float(scale),
        "source": float(np.abs(base_torch - direct).max()),
    }
    assert facts["source"] < 1e-5, facts
    assert facts["base"] < 2e-3 and facts["base"] < 2e-4 * scale, facts
    assert facts["lora_effect"] > 1.0, facts  # the LoRA changes the logits ...
    assert facts["lora"] < 2e-3 and facts["lora"] < 2e-4 * scale, facts  # ... the same way
