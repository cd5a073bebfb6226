"""Tiny random transformers models of the qwen family and their GGUF bases, for tests.

Owns :func:`tiny_model` (a randomly initialised Qwen2, Qwen3 or Qwen3-MoE causal LM built from
a config: no download) and :func:`write_gguf` (that model as an F32 GGUF base that both
llama.cpp and transformers' GGUF loader read, with the tokenizer of another GGUF, such as the
embedded model's, copied in and cut to the model's vocabulary: its first tokens and the BPE
merges among them, see :func:`tokenizer_fields`). Tensor names come from the ``gguf`` package's
tensor name map; Qwen3-MoE's fused ``gate_up_proj`` experts are split into ``ffn_gate_exps`` /
``ffn_up_exps``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

ARCHS = ("qwen2", "qwen3", "qwen3moe")  # GGUF spellings
HIDDEN, LAYERS, HEADS, KV_HEADS, FF = 64, 2, 4, 2, 128
HEAD_DIM = 32  # qwen3's own: not HIDDEN / HEADS, as in the real Qwen3 (128 per head)
EXPERTS, EXPERTS_USED, EXPERT_FF = 4, 2, 32
# the first 2048 of the embedded tokenizer's 49152 tokens (see tokenizer_fields): every reader
# of a GGUF (transformers reads it twice per load) parses its 49k tokens and merges for seconds
VOCAB = 2048
Field = tuple[str, Any, Any, Any]  # a GGUF key, its value, its type, its array item type
ROPE_THETA, RMS_EPS, CONTEXT = 10000.0, 1e-6, 2048


def tiny_model(arch: str, *, vocab: int = VOCAB, seed: int = 0) -> Any:
    """A random ``arch`` causal LM (f32, eval mode), its weights large enough that the logits
    are far from uniform (norms near one, biases and projections of order 0.1-1)."""
    import transformers as tf

    common: dict[str, Any] = dict(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        intermediate_size=FF,
        max_position_embeddings=CONTEXT,
        rms_norm_eps=RMS_EPS,
        rope_theta=ROPE_THETA,
        tie_word_embeddings=False,
    )
    if arch == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(**common))
    elif arch == "qwen3":
        model = tf.Qwen3ForCausalLM(tf.Qwen3Config(**common, head_dim=HEAD_DIM))
    elif arch == "qwen3moe":
        config = tf.Qwen3MoeConfig(
            **common,
            head_dim=HEAD_DIM,
            num_experts=EXPERTS,
            num_experts_per_tok=EXPERTS_USED,
            moe_intermediate_size=EXPERT_FF,
            norm_topk_prob=True,  # llama.cpp's qwen3moe renormalises the chosen experts' weights
        )
        model = tf.Qwen3MoeForCausalLM(config)
    else:
        raise ValueError(f"no tiny model for {arch!r}")
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * noise)
            elif name == "model.embed_tokens.weight":
                p.copy_(noise)
            else:
                fan_in = p.shape[-1] if p.ndim > 1 else HIDDEN
                p.copy_(noise * (1.5 if p.ndim == 1 else 2.0) / fan_in**0.5)
    return model.float().eval()


def _gguf_tensors(model: Any, arch: str) -> dict[str, np.ndarray]:
    """GGUF tensor name -> numpy array (shapes as transformers stores them: GGUF dims reversed)."""
    import gguf

    by_name = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}
    names = gguf.get_tensor_name_map(by_name[arch], model.config.num_hidden_layers)
    out: dict[str, np.ndarray] = {}
    for hf_name, tensor in model.state_dict().items():
        t = tensor.detach().float().cpu()
        base, _, suffix = hf_name.rpartition(".")
        if suffix not in ("weight", "bias"):  # a bare parameter: fused experts
            base, suffix = hf_name, "weight"
        parts: list[tuple[str, torch.Tensor]] = [(base, t)]
        if base.endswith(".experts.gate_up_proj"):  # (experts, 2 ff, hidden): gate then up
            gate, up = t.chunk(2, dim=1)
            stem = base.removesuffix(".gate_up_proj")
            parts = [(f"{stem}.gate_proj", gate), (f"{stem}.up_proj", up)]
        for hf_base, value in parts:
            gname = names.get_name(hf_base)
            if gname is None:
                raise KeyError(f"the gguf name map has no tensor for {hf_base}")
            out[f"{gname}.{suffix}"] = np.ascontiguousarray(value.numpy(), dtype=np.float32)
    return out


def write_gguf(model: Any, arch: str, out: Path, tokenizer_from: Path) -> Path:
    """``model`` as an F32 GGUF base of architecture ``arch`` at ``out``, with the tokenizer
    of the GGUF ``tokenizer_from``, cut to the model's vocabulary (:func:`tokenizer_fields`)."""
    import gguf

    cfg = model.config
    fields = tokenizer_fields(Path(tokenizer_from), cfg.vocab_size)
    w = gguf.GGUFWriter(str(out), arch)
    w.add_name(f"tiny-{arch}")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_rope_freq_base(float(cfg.rope_parameters["rope_theta"]))
    w.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
    if getattr(cfg, "head_dim", None) is not None:
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
    if arch == "qwen3moe":
        w.add_expert_count(cfg.num_experts)
        w.add_expert_used_count(cfg.num_experts_per_tok)
        w.add_expert_feed_forward_length(cfg.moe_intermediate_size)
    for name, value, kind, sub in fields:
        w.add_key_value(name, value, kind, sub_type=sub)
    for name, array in _gguf_tensors(model, arch).items():
        w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


@lru_cache(maxsize=4)
def tokenizer_fields(path: Path, vocab: int | None = None) -> tuple[Field, ...]:
    """The ``tokenizer.*`` fields of the GGUF at ``path`` as (key, value, type, array item
    type), read once (the embedded model's 49k tokens and merges take seconds to parse). With
    ``vocab``, its first ``vocab`` tokens and the BPE merges among them only: a smaller BPE
    tokenizer of the same kind, for a file every reader parses in a fraction of the time."""
    import gguf

    if vocab is not None:
        return _first_tokens(tokenizer_fields(path), vocab)
    out = []
    for name, field in gguf.GGUFReader(str(path)).fields.items():
        if name.startswith("tokenizer."):
            kind = field.types[0]
            sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            out.append((name, field.contents(), kind, sub))
    return tuple(out)


def _first_tokens(fields: tuple[Field, ...], vocab: int) -> tuple[Field, ...]:
    values = {name: value for name, value, _, _ in fields}
    tokens = values["tokenizer.ggml.tokens"][:vocab]
    if len(tokens) < vocab:
        raise ValueError(f"the tokenizer has only {len(tokens)} tokens, not {vocab}")
    ids = {t: i for i, t in enumerate(tokens)}

    def kept(merge: str) -> bool:  # "a b": both parts and what they merge into are kept
        a, b = merge.split(" ", 1)
        return a in ids and b in ids and a + b in ids

    out = []
    for name, value, kind, sub in fields:
        if name in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
            value = value[:vocab]
        elif name == "tokenizer.ggml.merges":
            value = [m for m in value if kept(m)]
        elif name.endswith("_token_id") and value >= vocab:
            raise ValueError(f"{name} {value} is not among the first {vocab} tokens")
        out.append((name, value, kind, sub))
    return tuple(out)


def build_base(
    arch: str, out: Path, tokenizer_from: Path, *, vocab: int = VOCAB, seed: int = 0
) -> tuple[Any, Path]:
    """A tiny random ``arch`` model and its GGUF base at ``out`` (``vocab``: the tokenizer's
    size, 49152 for the embedded model's whole tokenizer)."""
    model = tiny_model(arch, vocab=vocab, seed=seed)
    return model, write_gguf(model, arch, out, tokenizer_from)
