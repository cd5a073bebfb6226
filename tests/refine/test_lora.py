"""LoRA in torch == LoRA in llama.cpp, and GGUF export -> import is lossless."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from macaron_local.engine.lora_io import BASE_SHA_KEY, LABEL_KEY, read_lora
from macaron_local.errors import RefineError
from macaron_local.refine.lora import (
    LoraConfig,
    attach_lora,
    detach_lora,
    export_lora,
    import_lora,
    lora_modules,
    lora_tensors,
)
from macaron_local.refine.train import TrainConfig, train
from tests.refine.helpers import CHAT

SHA = "ab" * 32


def _tokens(tokenizer) -> list[int]:
    return tokenizer.tokenize(tokenizer.render_chat(CHAT["messages"], add_generation_prompt=False))


def _logits(model, tokens: list[int]) -> np.ndarray:
    with torch.no_grad():
        return model(torch.tensor([tokens]))[0].numpy()


@pytest.fixture(scope="module")
def trained(torch_base, tokenizer, tmp_path_factory):
    """A rank-4 LoRA on q, v and ffn_up of every layer, trained 4 steps in f32."""
    detach_lora(torch_base)
    cfg = TrainConfig(
        rank=4,
        alpha=8,
        targets=("attn_q", "attn_v", "ffn_up"),
        steps=4,
        batch_size=1,
        lr=1e-2,
        warmup_steps=0,
        bf16=False,
        export_dtype="f32",
    )
    out = tmp_path_factory.mktemp("lora") / "pirate.gguf"
    res = train(
        [CHAT],
        model=torch_base,
        tokenizer=tokenizer,
        out=out,
        label="L0",
        base_sha256=SHA,
        config=cfg,
        progress=False,
    )
    return res


def test_training_lowers_the_loss_and_exports(trained) -> None:
    assert trained.status == "done" and trained.path.is_file()
    assert trained.losses[-1] < trained.losses[0] / 2
    lora = read_lora(trained.path)
    assert lora.rank == 4 and lora.alpha == 8.0
    assert len(lora.tensors) == 30 * 3
    assert lora.metadata[BASE_SHA_KEY] == SHA and lora.metadata[LABEL_KEY] == "L0"


def test_trained_lora_in_llamacpp_matches_torch(model, trained, f32_engine, tokenizer) -> None:
    tokens = _tokens(tokenizer)
    base = _logits(model, tokens)
    import_lora(model, trained.path)
    ours = _logits(model, tokens)
    f32_engine.load_adapter("pirate", trained.path)
    theirs = f32_engine.eval_logits(tokens, adapter="pirate", all_positions=True)
    assert np.abs(ours - base).max() > 1.0  # the adapter really changes the model
    assert np.abs(ours - theirs).max() < 1e-3


def test_export_import_round_trip_is_lossless(model, tmp_path) -> None:
    attach_lora(model, LoraConfig(rank=3, alpha=5, targets=("blk.1.*", "ffn_down")), seed=7)
    with torch.no_grad():
        for m in lora_modules(model).values():
            m.lora_b.normal_(0, 0.02)
    before = lora_tensors(model)
    assert "blk.1.attn_k.weight" in before and "blk.7.ffn_down.weight" in before
    assert "blk.2.attn_q.weight" not in before
    path = export_lora(model, tmp_path / "rt.gguf", metadata={LABEL_KEY: "L2"})
    detach_lora(model)
    config = import_lora(model, path)
    after = lora_tensors(model)
    assert config.rank == 3 and config.alpha == 5
    assert before.keys() == after.keys()
    for name, (a, b) in before.items():
        assert np.array_equal(a, after[name][0]) and np.array_equal(b, after[name][1])


def test_f16_export_keeps_f16_values(model, tmp_path) -> None:
    attach_lora(model, LoraConfig(rank=2, targets=("attn_v",)), seed=1)
    before = lora_tensors(model)
    path = export_lora(model, tmp_path / "h.gguf", dtype="f16")
    back = read_lora(path).tensors
    for name, (a, _b) in before.items():
        assert np.array_equal(a.astype(np.float16).astype(np.float32), back[name][0])


def test_fresh_lora_is_an_exact_no_op(model, tokenizer) -> None:
    tokens = _tokens(tokenizer)[:12]
    base = _logits(model, tokens)
    attach_lora(model, LoraConfig(rank=8), seed=3)
    assert np.array_equal(_logits(model, tokens), base)
    with pytest.raises(RefineError):
        attach_lora(model, LoraConfig(rank=8))
    detach_lora(model)
    assert not lora_modules(model)


def test_no_matching_target_is_an_error(model) -> None:
    with pytest.raises(RefineError, match="no tensor matches"):
        attach_lora(model, LoraConfig(targets=("attn_qkv",)))
