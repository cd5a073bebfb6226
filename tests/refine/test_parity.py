"""The torch model of the base computes what llama.cpp computes (F32 base, FA off, F32 KV)."""

from __future__ import annotations

import numpy as np
import torch

from tests.refine.helpers import CHAT


def _tokens(tokenizer, messages) -> list[int]:
    return tokenizer.tokenize(tokenizer.render_chat(messages, add_generation_prompt=False))


def test_torch_logits_match_llamacpp(model, f32_engine, tokenizer) -> None:
    tokens = _tokens(tokenizer, CHAT["messages"])
    with torch.no_grad():
        ours = model(torch.tensor([tokens]))[0].numpy()
    theirs = f32_engine.eval_logits(tokens, all_positions=True)
    assert ours.shape == theirs.shape == (len(tokens), 49152)
    assert np.abs(ours - theirs).max() < 1e-3
    assert (ours.argmax(-1) == theirs.argmax(-1)).all()


def test_shared_prefix_equals_full_rows(model, tokenizer) -> None:
    prefix = tokenizer.tokenize("<|im_start|>system\nAnswer with a label.<|im_end|>\n")
    tails = [
        tokenizer.tokenize("<|im_start|>user\nhello there<|im_end|>\n"),
        tokenizer.tokenize("<|im_start|>user\nwrite SQL<|im_end|>\n"),
    ]
    width = max(map(len, tails))
    rows = torch.tensor([t + [0] * (width - len(t)) for t in tails])
    with torch.no_grad():
        shared = model.hidden(rows, prefix=torch.tensor(prefix))
        for i, tail in enumerate(tails):
            full = model.hidden(torch.tensor([prefix + tail]))[0, len(prefix) :]
            assert torch.allclose(shared[i, : len(tail)], full, atol=1e-4)
