"""The transformers + peft backend: a LoRA it trains is one llama.cpp serves the same way.

On the embedded llama base (its F32 copy, where llama.cpp and torch agree to float precision)
the exported Q/K rows must be permuted for llama.cpp's rope; on the real qwen2 0.5B fixture
(Q4_K_M) they must not, and the trainer runs end to end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tests.refine.helpers import CHAT

pytest.importorskip("peft")


def _random_lora(model: Any, targets: tuple[str, ...], seed: int = 3, scale: float = 0.05) -> None:
    """A LoRA with random A and B (a fresh one is an exact no-op, which would prove nothing)."""
    from macaron_local.refine.lora import LoraConfig, attach_lora

    attach_lora(model, LoraConfig(rank=4, alpha=8.0, targets=targets), seed=seed)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.copy_(torch.randn(p.shape, generator=gen) * scale)


def _logits(model: Any, tokens: list[int]) -> np.ndarray:
    with torch.no_grad():
        h = model.hidden(torch.tensor([tokens]))
        return model.logits(h)[0].float().numpy()


def test_llama_qk_rows_are_permuted_for_llamacpp(
    f32_base: Path, f32_engine: Any, tokenizer: Any, tmp_path: Path, model: Any
) -> None:
    from macaron_local.refine.hf import HFBase
    from macaron_local.refine.lora import detach_lora, export_lora
    from macaron_local.refine.refine_loop import sample_tokens

    gguf_space = model
    model = HFBase.load(f32_base, "llama", on="cpu")
    tokens = tokenizer.tokenize(
        tokenizer.render_chat(CHAT["messages"], add_generation_prompt=False)
    )
    base_torch = _logits(model, tokens)
    assert np.abs(base_torch - f32_engine.eval_logits(tokens, all_positions=True)).max() < 1e-3
    _random_lora(model, ("attn_q", "attn_k", "attn_v"))
    ours = _logits(model, tokens)
    path = export_lora(model, tmp_path / "hf-llama.gguf", metadata={})
    detach_lora(model)
    f32_engine.load_adapter("hf", path)
    theirs = f32_engine.eval_logits(tokens, adapter="hf", all_positions=True)
    assert np.abs(ours - base_torch).max() > 0.5  # the LoRA changes the logits...
    assert np.abs(ours - theirs).max() < 2e-3  # ...and llama.cpp applies it identically
    # the learning loop's sampling (GRPO) gives the same greedy tokens on either backend
    prompt = tokenizer.tokenize(tokenizer.render_chat(CHAT["messages"][:2]))
    kw: dict[str, Any] = {"n": 2, "max_tokens": 8, "temperature": 0.0, "eog": tokenizer.is_eog}
    assert sample_tokens(model, prompt, **kw) == sample_tokens(gguf_space, prompt, **kw)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_qwen2_base_trains_exports_and_serves(tmp_path: Path) -> None:
    from macaron_local.engine.engine import Engine, EngineConfig
    from macaron_local.engine.lora_io import read_lora
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.hf import HFBase
    from macaron_local.refine.lora import detach_lora, export_lora
    from macaron_local.refine.train import TrainConfig, train
    from tests.tall_fixture import qwen2_gguf

    base = qwen2_gguf()
    model = load_base(base)  # qwen2 has no GGUF-space model: transformers loads it
    assert isinstance(model, HFBase) and model.arch == "qwen2"
    tok = shared_tokenizer(base)
    tokens = tok.tokenize(tok.render_chat(CHAT["messages"], add_generation_prompt=False))
    with Engine(base, EngineConfig(n_ctx=512, n_threads=1)) as engine:
        base_cpp = engine.eval_logits(tokens, all_positions=True)
        base_torch = _logits(model, tokens)
        _random_lora(model, ("attn_q", "attn_k", "attn_v", "attn_output"), scale=0.03)
        ours = _logits(model, tokens)
        path = export_lora(model, tmp_path / "qwen2.gguf", metadata={})
        detach_lora(model)
        engine.load_adapter("hf", path)
        theirs = engine.eval_logits(tokens, adapter="hf", all_positions=True)
    # Q4_K_M in llama.cpp vs its dequantized weights in torch: compare what the LoRA changes
    d_ours, d_theirs = (ours - base_torch).ravel(), (theirs - base_cpp).ravel()
    corr = np.corrcoef(d_ours, d_theirs)[0, 1]
    rel = np.linalg.norm(d_ours - d_theirs) / np.linalg.norm(d_ours)
    agree = (ours.argmax(-1) == theirs.argmax(-1)).mean()
    agree_base = (base_torch.argmax(-1) == base_cpp.argmax(-1)).mean()
    facts = dict(max=np.abs(d_ours).max(), corr=corr, rel=rel, agree=agree, base=agree_base)
    assert np.abs(d_ours).max() > 0.5, facts
    assert corr > 0.95 and rel < 0.35, facts
    assert agree >= agree_base - 0.1, facts  # no worse than the quantization

    # the trainer itself, a few steps: loss on targets, exported with the base's checksum
    rows = [{"messages": CHAT["messages"]} for _ in range(4)]
    cfg = TrainConfig(steps=2, batch_size=2, rank=2, alpha=4.0, max_len=256, targets=("attn_q",))
    res = train(
        rows, model=model, tokenizer=tok, out=tmp_path / "L0.gguf", label="L0",
        base_sha256="q" * 64, config=cfg, arch="qwen2", progress=False,
    )  # fmt: skip
    assert res.status == "done" and len(res.losses) == 2 and all(np.isfinite(res.losses))
    lora = read_lora(res.path)
    assert lora.arch == "qwen2" and lora.base_sha256 == "q" * 64
    assert sorted(lora.targets) == sorted(f"blk.{i}.attn_q.weight" for i in range(24))


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_real_qwen2_base_in_four_commands() -> None:
    """models add -> hcp new -> a short bootstrap -> ask, on the real 0.5B, as a user types them;
    the answer is served by the L0 trained for that base, under that profile."""
    import json
    import os
    import subprocess

    from macaron_local.manifests import get_manifest
    from tests.tall_fixture import SHA256, qwen2_gguf

    def macaron(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        done = subprocess.run(
            ["macaron", *args], capture_output=True, text=True, env=env, timeout=900
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        return done

    added = macaron("models", "add", str(qwen2_gguf()), "--id", "coder05")
    assert "added coder05: qwen2" in added.stdout
    macaron("hcp", "new", "coder", "--base", "coder05")
    # a long request's routing row is clipped in the base's own tokens, as serving clips it
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.hcp import load_profile
    from macaron_local.refine.data import route_examples
    from macaron_local.turns.route import clip_middle

    lines = (
        f"2026-12-0{i % 9 + 1} 10:{i % 60:02d} kernel: EXT4-fs warning (device sda{i % 4}): "
        f"ext4_dx_add_entry:{2000 + i}: Directory index full!\n"
        for i in range(60)
    )
    long = "Please read this log and tell me what broke:\n" + "".join(lines)
    [row] = route_examples([{"text": long, "label": "L1"}], load_profile("coder"))
    clipped = clip_middle(shared_tokenizer(qwen2_gguf()), long)
    assert clipped != clip_middle(shared_tokenizer(), long)  # the two vocabularies cut apart
    assert clipped in row["messages"][-2]["content"]
    boot = ["--labels", "L0", "--steps", "1", "--batch-size", "1", "--rank", "2"]
    trained = macaron("refine", "bootstrap", "--profile", "coder", *boot, "--max-len", "384")
    assert "plan: transformers+peft" in trained.stderr  # the plan names the backend it chose
    [l0] = get_manifest("coder05").adapters
    assert l0.label == "L0" and l0.base_sha256 == SHA256
    question = ["--label", "L0", "--json", "What is the capital of Portugal?"]
    answer = json.loads(macaron("ask", "--profile", "coder", *question).stdout)
    assert answer["answer"].strip() and answer["backend"] == "local"
    assert answer["adapter_revision"] == l0.revision
    # the group-level option serves the same profile, never another one
    again = json.loads(macaron("--profile", "coder", "ask", *question).stdout)
    assert again["profile_hash"] == answer["profile_hash"]
    assert again["adapter_revision"] == l0.revision
