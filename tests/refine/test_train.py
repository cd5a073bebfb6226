"""Training runs: deterministic for a seed, cancellable, recorded, checkpoints in the cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

from macaron_local import paths
from macaron_local.engine.lora_io import read_lora
from macaron_local.refine.train import TrainConfig, batches, train
from tests.refine.helpers import CHAT

CFG = TrainConfig(
    rank=2,
    targets=("attn_v",),
    steps=2,
    batch_size=1,
    warmup_steps=0,
    bf16=False,
    export_dtype="f32",
)
SHA = "cd" * 32


def test_same_seed_same_adapter(model, tokenizer, tmp_path: Path) -> None:
    runs = [
        train(
            [CHAT],
            model=model,
            tokenizer=tokenizer,
            out=tmp_path / f"r{i}.gguf",
            label="L0",
            base_sha256=SHA,
            config=CFG,
            progress=False,
        )
        for i in range(2)
    ]
    a, b = read_lora(runs[0].path).tensors, read_lora(runs[1].path).tensors
    assert a.keys() == b.keys()
    assert all(np.array_equal(a[k][1], b[k][1]) for k in a)
    assert runs[0].losses == runs[1].losses
    assert (tmp_path / "r0.gguf").read_bytes() == (tmp_path / "r1.gguf").read_bytes()


def test_run_record_and_loss_plot(model, tokenizer, tmp_path: Path) -> None:
    cfg = CFG.model_copy(update={"checkpoint_every": 1, "bf16": True})
    res = train(
        [CHAT, CHAT],
        model=model,
        tokenizer=tokenizer,
        out=tmp_path / "x.gguf",
        label="L2",
        base_sha256=SHA,
        config=cfg,
        profile_hash="p" * 64,
        progress=False,
    )
    record = json.loads(res.run_json.read_text())
    assert res.run_json == tmp_path / "x.run.json"
    assert record["status"] == "done" and record["label"] == "L2"
    assert record["config"]["checkpoint_every"] == 1 and record["steps"] == 2
    assert record["profile_hash"] == "p" * 64 and len(record["losses"]) == 2
    answer = tokenizer.tokenize(CHAT["messages"][-1]["content"] + "<|im_end|>")
    assert record["n_target_tokens"] == 2 * len(answer)
    assert res.loss_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ckpt = paths.cache_dir() / "refine" / res.run_id / "checkpoint.pt"
    assert ckpt.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.gguf", "x.loss.png", "x.run.json"]


def test_cancel_stops_between_steps_and_exports_nothing(model, tokenizer, tmp_path) -> None:
    stop = threading.Event()
    stop.set()
    res = train(
        [CHAT],
        model=model,
        tokenizer=tokenizer,
        out=tmp_path / "c.gguf",
        label="L0",
        base_sha256=SHA,
        config=CFG,
        cancel=stop,
        progress=False,
    )
    assert res.status == "cancelled" and res.path is None and res.steps == 0
    assert not (tmp_path / "c.gguf").exists()
    assert json.loads(res.run_json.read_text())["status"] == "cancelled"
    from macaron_local.refine.lora import lora_modules

    assert not lora_modules(model)  # the base is left clean


def test_batches_cover_every_example_each_epoch() -> None:
    keys = [("b" if i % 3 else "a", i % 7) for i in range(50)]
    feed = batches(50, 4, keys, seed=1)
    epoch = [next(feed) for _ in range(13)]
    assert sorted(i for b in epoch for i in b) == list(range(50))
    again = batches(50, 4, keys, seed=1)
    assert [next(again) for _ in range(13)] == epoch


def test_kl_anchor_is_zero_at_the_start_and_grows_as_the_adapter_moves(model, tokenizer) -> None:
    """The refine loop's anchor on replay rows: KL(starting revision || current) over answer
    tokens. It is 0 while nothing has moved, positive after, its gradient pulls the moved
    weights back, and the weights are the current ones again after the call."""
    import torch

    from macaron_local.refine.lora import LoraConfig, attach_lora
    from macaron_local.refine.train import encode_all, sft_loss

    attach_lora(model, LoraConfig(rank=2, targets=("attn_v",)), seed=5)
    params = [p for p in model.parameters() if p.requires_grad]
    with torch.no_grad():
        for p in params:
            p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(1)))
    parent = [p.detach().clone() for p in params]
    batch = encode_all(tokenizer, [CHAT], 256)
    assert abs(sft_loss(model, batch, False, (params, parent))[1].item()) < 1e-6
    with torch.no_grad():
        for p in params:
            p.add_(0.2)
    moved = [p.detach().clone() for p in params]
    ce, kl = sft_loss(model, batch, False, (params, parent))
    assert kl.item() > 1e-4
    plain, none = sft_loss(model, batch, False)  # the anchor adds a term, the CE is the same
    assert none is None and torch.allclose(plain, ce)
    assert all(torch.equal(p, m) for p, m in zip(params, moved, strict=True))
    kl.backward()
    norm = torch.sqrt(sum((p.grad**2).sum() for p in params))
    with torch.no_grad():  # a small step down the gradient brings the adapter back towards it
        for p in params:
            p.sub_(0.01 * p.grad / norm)
    assert sft_loss(model, batch, False, (params, parent))[1].item() < kl.item()


def _run(model, tokenizer, examples: list, out: Path, config: TrainConfig, **kw):
    return train(examples, model=model, tokenizer=tokenizer, out=out, label="L0",
                 base_sha256=SHA, config=config, progress=False, **kw)  # fmt: skip


def _drift(model, tokenizer, path: Path, anchor: Path, example: dict) -> float:
    """KL(adapter at ``anchor`` || adapter at ``path``) on ``example``'s answer tokens."""
    from macaron_local.refine.lora import detach_lora, import_lora
    from macaron_local.refine.train import encode_all, sft_loss

    import_lora(model, anchor)
    start = [p.detach().clone() for p in model.parameters() if p.requires_grad]
    detach_lora(model)
    import_lora(model, path)
    try:
        params = [p for p in model.parameters() if p.requires_grad]
        _, kl = sft_loss(model, encode_all(tokenizer, [example], 256), False, (params, start))
        return kl.item()
    finally:
        detach_lora(model)


def test_continued_training_keeps_the_anchored_answers(model, tokenizer, tmp_path: Path) -> None:
    """``kl_weight``: the examples marked ``anchor`` pay KL(start || current), so a continued
    run that learns other rows moves their answers less than the same run without it; the
    record names the anchor; a run with nothing to anchor to is refused with the reason."""
    from macaron_local.errors import RefineError

    start = _run(model, tokenizer, [CHAT], tmp_path / "start.gguf", CFG).path
    assert start is not None
    other = {
        "messages": [*CHAT["messages"][:2], {"role": "assistant", "content": "Arr, a parrot."}]
    }
    kept = {**CHAT, "anchor": True}
    cfg = CFG.model_copy(update={"steps": 6, "batch_size": 2, "lr": 1e-2})
    drift = {}
    for w in (0.0, 20.0):
        weighted = cfg.model_copy(update={"kl_weight": w})
        res = _run(model, tokenizer, [kept, other], tmp_path / f"w{w}.gguf", weighted, init=start)
        assert res.path is not None
        drift[w] = _drift(model, tokenizer, res.path, start, CHAT)
        record = json.loads(res.run_json.read_text())
        assert record["anchor"] == (str(start) if w else None)
        assert record["n_anchored"] == (1 if w else 0)
    assert drift[0.0] > 1e-3
    assert drift[20.0] < 0.5 * drift[0.0], drift
    bigger = _run(
        model, tokenizer, [CHAT], tmp_path / "r4.gguf", CFG.model_copy(update={"rank": 4})
    ).path
    assert bigger is not None
    anchored = cfg.model_copy(update={"kl_weight": 1.0})
    for init, anchor, says in ((None, None, "has none"), (start, bigger, "rank or targets")):
        try:
            _run(model, tokenizer, [kept], tmp_path / "no.gguf", anchored, init=init, anchor=anchor)
        except RefineError as exc:
            assert says in str(exc)
        else:
            raise AssertionError(f"kl_weight with init={init} anchor={anchor} ran")
        assert not (tmp_path / "no.gguf").exists()


def test_the_plan_counts_the_kl_anchors_logits(model_path: Path) -> None:
    """A run with a KL anchor holds several more copies of the target logits (the anchor's
    log-probabilities and the KL's intermediates): its memory estimate is that much higher."""
    from macaron_local.refine.plan import plan

    cfg = TrainConfig(batch_size=8, max_len=528)
    plain = plan(model_path, "llama", cfg, steps=10).memory_bytes
    kept = plan(model_path, "llama", cfg.model_copy(update={"kl_weight": 2.0}), steps=10)
    assert kept.memory_bytes - plain > 2**30  # 49k-token vocabulary: ~1.2 GiB more at batch 8
