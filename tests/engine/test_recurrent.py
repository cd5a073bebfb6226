"""A recurrent base reuses its prefixes through state checkpoints (issue 21 item 3).

A recurrent state (Mamba here; the recurrent half of a hybrid such as Gated DeltaNet) cannot
lose the tail of a sequence, so without checkpoints every prompt that shares only a prefix with
what its slot holds is read from the start: the router's fixed prompt on every route. The model
is a two-layer Mamba with random weights built here with the ``gguf`` package (the embedded
model's tokenizer, 14 MB, under a second): real llama.cpp, no download.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from macaron_local.engine import Engine, EngineConfig
from macaron_local.engine.engine import CHECKPOINT_BACKOFF
from tests.engine.conftest import make_adapter

N_EMBD, N_LAYER, D_CONV, D_STATE, DT_RANK = 64, 2, 4, 8, 4
ROUTER = "You are the router. Answer with the label of the specialist for the request. " * 5
REQUESTS = ("remind me at 5 to call mom", "write a python function", "how are you today?")


def build_mamba(out: Path, tokenizer_from: Path) -> Path:
    """A tiny Mamba GGUF with random weights and ``tokenizer_from``'s tokenizer."""
    import gguf

    src = gguf.GGUFReader(str(tokenizer_from))
    w = gguf.GGUFWriter(str(out), "mamba")
    d_inner = 2 * N_EMBD
    w.add_context_length(2048)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_ssm_conv_kernel(D_CONV)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_state_size(D_STATE)
    w.add_ssm_time_step_rank(DT_RANK)
    for name, field in src.fields.items():
        if name.startswith("tokenizer."):
            kind = field.types[0]
            sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            w.add_key_value(name, field.contents(), kind, sub_type=sub)
    n_vocab = len(src.fields["tokenizer.ggml.tokens"].contents())
    rng = np.random.default_rng(0)

    def rand(*shape: int, scale: float = 0.1) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    w.add_tensor("token_embd.weight", rand(n_vocab, N_EMBD, scale=1.0))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, np.float32))
    for i in range(N_LAYER):  # numpy shapes: GGUF dimensions reversed
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(N_EMBD, np.float32))
        w.add_tensor(p + "ssm_in.weight", rand(2 * d_inner, N_EMBD))
        w.add_tensor(p + "ssm_conv1d.weight", rand(d_inner, D_CONV))
        w.add_tensor(p + "ssm_conv1d.bias", rand(d_inner))
        w.add_tensor(p + "ssm_x.weight", rand(DT_RANK + 2 * D_STATE, d_inner))
        w.add_tensor(p + "ssm_dt.weight", rand(d_inner, DT_RANK))
        w.add_tensor(p + "ssm_dt.bias", rand(d_inner))
        w.add_tensor(p + "ssm_a", -np.exp(rand(d_inner, D_STATE)))
        w.add_tensor(p + "ssm_d", np.ones(d_inner, np.float32))
        w.add_tensor(p + "ssm_out.weight", rand(N_EMBD, d_inner))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


@pytest.fixture(scope="module")
def mamba(tmp_path_factory: pytest.TempPathFactory, model_path: Path) -> Path:
    return build_mamba(tmp_path_factory.mktemp("mamba") / "tiny-mamba.gguf", model_path)


def _read(eng: Engine, fixed: list[int]) -> None:
    """The router's warm-up: its fixed prompt read into the route slot (in the background)."""
    warm = eng.prefill(fixed, slot="route")
    assert warm is not None
    warm.result()


def _routes(eng: Engine) -> list[tuple[int, int, int]]:
    """The router's pattern: its fixed prompt read once, then requests after it on one slot;
    (prompt, reused, evaluated) per request."""
    fixed = eng.tokenize(ROUTER)
    _read(eng, fixed)
    out = []
    for text in REQUESTS:
        done = eng.complete(fixed + eng.tokenize(" " + text), slot="route", max_tokens=2)
        out.append((done.n_prompt, done.n_reused, done.n_evaluated))
    return out


def test_a_recurrent_base_reads_only_what_follows_its_checkpointed_prefix(mamba: Path) -> None:
    n_fixed = None
    got = {}
    for checkpoints in (0, 3):
        with Engine(mamba, EngineConfig(n_ctx=1024, state_checkpoints=checkpoints)) as eng:
            assert eng.memory == "recurrent"
            n_fixed = len(eng.tokenize(ROUTER))
            got[checkpoints] = _routes(eng)
            prompt = eng.tokenize(ROUTER + " " + REQUESTS[0])
            # the slot's state, restored from a checkpoint, gives the logits of a fresh read
            warm = eng.eval_logits(prompt, slot="route")
            cold = eng.eval_logits(prompt)
            np.testing.assert_allclose(warm, cold, atol=1e-4)
    # the first request extends what the slot holds: reused either way
    assert got[0][0][1] == got[3][0][1] == n_fixed
    # later ones share only the fixed prompt: without checkpoints read from the start ...
    assert [r[1] for r in got[0][1:]] == [0, 0]
    assert all(ev == n for n, _, ev in got[0][1:])
    # ... with them, only what follows it
    assert [r[1] for r in got[3][1:]] == [n_fixed, n_fixed]
    assert all(ev == n - n_fixed for n, _, ev in got[3][1:])


def test_checkpoints_survive_parking_and_never_cross_adapters(mamba: Path, tmp_path: Path) -> None:
    targets = [f"blk.{i}.ssm_in.weight" for i in range(N_LAYER)]
    adapter = make_adapter(mamba, tmp_path / "a.gguf", seed=2, scale=0.5, targets=targets,
                           arch="mamba")  # fmt: skip
    with Engine(mamba, EngineConfig(n_ctx=1024, resident_slots=1)) as eng:
        eng.load_adapter("a", adapter)
        fixed = eng.tokenize(ROUTER)
        first, second = (fixed + eng.tokenize(" " + text) for text in REQUESTS[:2])
        _read(eng, fixed)
        eng.complete(first, slot="route", max_tokens=2)
        eng.complete(eng.tokenize("Another slot takes the seat."), slot="other", max_tokens=2)
        assert eng.parked_bytes() > 0
        # parked and restored, the route slot still starts from its fixed prompt's checkpoint
        again = eng.complete(second, slot="route", max_tokens=2)
        assert (again.n_reused, again.n_evaluated) == (len(fixed), len(second) - len(fixed))
        # asked for under another adapter, the slot holds nothing: no state read under the
        # base is reused under the adapter
        other = eng.complete(first, slot="route", adapter="a", max_tokens=2)
        assert (other.n_reused, other.n_evaluated) == (0, len(first))
        np.testing.assert_allclose(
            eng.eval_logits(first, adapter="a", slot="route"),
            eng.eval_logits(first, adapter="a"),
            atol=1e-4,
        )


def test_a_conversation_reads_each_turn_from_the_last_checkpoint(mamba: Path) -> None:
    """The answer slot: each view extends the one before with the answer as text. A random
    model answers in newlines, which merge with the template's last newline, so the previous
    prompt is no token prefix of the next: the checkpoint a few tokens short of its end is."""
    with Engine(mamba, EngineConfig(n_ctx=2048)) as eng:
        history = [{"role": "system", "content": "You are a helpful assistant."}]
        got = []
        for text in REQUESTS:
            history.append({"role": "user", "content": text})
            view = eng.chat_tokens(history)
            done = eng.complete(view, slot="answer", max_tokens=8)
            history.append({"role": "assistant", "content": done.text})
            got.append((len(view), done.n_reused, done.n_evaluated))
            np.testing.assert_allclose(
                eng.eval_logits(view, slot="answer"), eng.eval_logits(view), atol=1e-4
            )
    for (before, _, _), (n, reused, evaluated) in itertools.pairwise(got):
        assert before - CHECKPOINT_BACKOFF <= reused < n and reused + evaluated == n


def test_seats_are_sized_by_the_kv_they_take(model_path: Path, mamba: Path) -> None:
    """``resident_slots`` is lowered to what half the free memory holds (nine 32k seats of a
    large base are tens of GiB); a seat's size comes from the attention layers' K and V."""
    from macaron_local.engine.engine import fit_seats, kv_bytes_per_token
    from macaron_local.engine.gguf_model import inspect_model

    smol = inspect_model(model_path)  # 30 layers, 3 KV heads of 64: 384 values of K and V
    assert kv_bytes_per_token(smol, "f16") == 30 * 384 * 2
    assert kv_bytes_per_token(smol, "f32") == 30 * 384 * 4
    assert kv_bytes_per_token(inspect_model(mamba), "f16") is None  # no KV cache to size
    seat = 4608 << 20  # a 32k seat of Qwen3-8B
    assert fit_seats(9, seat, 80 << 30) == 8  # an 80 GiB GPU: 40 GiB for KV
    assert fit_seats(9, seat, 20 << 30) == 2 and fit_seats(9, seat, 4 << 30) == 1
    assert fit_seats(9, 45 << 20, 20 << 30) == 9
