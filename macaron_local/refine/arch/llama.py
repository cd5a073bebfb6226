"""The llama architecture in torch, in GGUF tensor space.

Owns the forward pass of GGUF ``general.architecture = "llama"`` models exactly as llama.cpp
computes it (``LLM_ARCH_LLAMA``, ``LLAMA_ROPE_TYPE_NORM``): RMSNorm with the file's epsilon,
Q/K/V projections, RoPE on *adjacent pairs* (2i, 2i+1) with theta_i = base^(-2i/d) because the
converter already permuted the Q/K rows, grouped-query attention (query head h reads KV head
h // group), SiLU-gated FFN, final norm and the tied (or separate) output matrix.

Module names mirror GGUF tensor names (``blk.3.attn_q`` holds ``blk.3.attn_q.weight``), so a
LoRA on a module exports under the base tensor's own name with no permutation. All base weights
are frozen. Must not know about LoRA, data or training.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from macaron_local.errors import RefineError
from macaron_local.refine.weights import GGUFWeights

KV = tuple[torch.Tensor, torch.Tensor]
LINEARS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


@dataclass(frozen=True)
class LlamaConfig:
    """Hyper-parameters read from GGUF metadata (``llama.*`` keys)."""

    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_vocab: int
    rope_base: float
    rope_dim: int
    eps: float

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @classmethod
    def from_weights(cls, w: GGUFWeights) -> LlamaConfig:
        scaling = w.field("rope.scaling.type")
        if scaling not in (None, "none"):
            raise RefineError(f"{w.path.name}: RoPE scaling {scaling!r} is not supported")
        n_embd = int(w.number("embedding_length"))
        n_head = int(w.number("attention.head_count"))
        return cls(
            n_layer=int(w.number("block_count")),
            n_embd=n_embd,
            n_head=n_head,
            n_head_kv=int(w.number("attention.head_count_kv", n_head)),
            n_ff=int(w.number("feed_forward_length")),
            n_vocab=int(w.tensors["token_embd.weight"].shape[0]),
            rope_base=w.number("rope.freq_base", 10000.0),
            rope_dim=int(w.number("rope.dimension_count", n_embd // n_head)),
            eps=w.number("attention.layer_norm_rms_epsilon", 1e-5),
        )


def _frozen(array: object) -> nn.Parameter:
    return nn.Parameter(torch.tensor(array, dtype=torch.float32), requires_grad=False)


class Linear(nn.Module):
    """A frozen GGUF matrix (out, in): ``y = x @ W^T``. LoRA wraps modules of this class."""

    def __init__(self, weight: object) -> None:
        super().__init__()
        self.weight = _frozen(weight)

    @property
    def in_features(self) -> int:
        return int(self.weight.shape[1])

    @property
    def out_features(self) -> int:
        return int(self.weight.shape[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight)


class RMSNorm(nn.Module):
    """llama.cpp ``rms_norm`` then multiply by the weight, always computed in float32."""

    def __init__(self, weight: object, eps: float) -> None:
        super().__init__()
        self.weight = _frozen(weight)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float()
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate adjacent pairs (2i, 2i+1) of the last dim; ``x`` is (B, T, H, D), cos/sin (T, D/2)."""
    pairs = x.unflatten(-1, (-1, 2))
    x0, x1 = pairs[..., 0], pairs[..., 1]
    c, s = cos[:, None, :].to(x.dtype), sin[:, None, :].to(x.dtype)
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


class Block(nn.Module):
    """One transformer layer; attribute names are the GGUF tensor names after ``blk.{i}.``."""

    # the LINEARS, set by name: a Linear, or the LoRA module that wraps one
    attn_q: nn.Module
    attn_k: nn.Module
    attn_v: nn.Module
    attn_output: nn.Module
    ffn_gate: nn.Module
    ffn_up: nn.Module
    ffn_down: nn.Module

    def __init__(self, cfg: LlamaConfig, w: dict[str, object], prefix: str) -> None:
        super().__init__()
        self.cfg = cfg
        self.attn_norm = RMSNorm(w[f"{prefix}.attn_norm.weight"], cfg.eps)
        self.ffn_norm = RMSNorm(w[f"{prefix}.ffn_norm.weight"], cfg.eps)
        for name in LINEARS:
            setattr(self, name, Linear(w[f"{prefix}.{name}.weight"]))

    def forward(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, past: KV | None = None
    ) -> tuple[torch.Tensor, KV]:
        """``x`` (B, T, d) at positions P..P+T-1, where P is the length of ``past`` (a shared
        prefix's keys/values, batch 1). Returns the new states and this call's own (k, v)."""
        cfg = self.cfg
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = rope(self.attn_q(h).view(b, t, cfg.n_head, cfg.head_dim), cos, sin)
        k = rope(self.attn_k(h).view(b, t, cfg.n_head_kv, cfg.head_dim), cos, sin)
        v = self.attn_v(h).view(b, t, cfg.n_head_kv, cfg.head_dim)
        q, k, v = (z.transpose(1, 2).to(q.dtype) for z in (q, k, v))
        own = (k, v)
        gqa = cfg.n_head != cfg.n_head_kv
        if past is None:
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        else:
            n = past[0].shape[2]
            k = torch.cat((past[0].to(q.dtype).expand(b, -1, -1, -1), k), dim=2)
            v = torch.cat((past[1].to(q.dtype).expand(b, -1, -1, -1), v), dim=2)
            mask = torch.ones(t, n + t, dtype=torch.bool).tril(diagonal=n)
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
        x = x + self.attn_output(att.transpose(1, 2).reshape(b, t, cfg.n_embd))
        h = self.ffn_norm(x)
        return x + self.ffn_down(F.silu(self.ffn_gate(h)) * self.ffn_up(h)), own


class LlamaModel(nn.Module):
    """The whole model. ``hidden`` gives the final-norm states; ``logits`` projects any subset."""

    inv_freq: torch.Tensor  # a buffer (register_buffer)

    def __init__(self, cfg: LlamaConfig, w: dict[str, object]) -> None:
        super().__init__()
        self.cfg = cfg
        self.token_embd = nn.Embedding(
            cfg.n_vocab, cfg.n_embd, _freeze=True, _weight=torch.tensor(w["token_embd.weight"])
        )
        self.blk = nn.ModuleList(Block(cfg, w, f"blk.{i}") for i in range(cfg.n_layer))
        self.output_norm = RMSNorm(w["output_norm.weight"], cfg.eps)
        self.output = Linear(w["output.weight"]) if "output.weight" in w else None
        half = cfg.rope_dim // 2
        inv = cfg.rope_base ** (-torch.arange(half, dtype=torch.float64) * 2 / cfg.rope_dim)
        self.register_buffer("inv_freq", inv, persistent=False)

    def _rope_tables(self, start: int, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        pos = torch.arange(start, start + t, dtype=torch.float64)
        ang = pos[:, None] * self.inv_freq[None, :]
        return ang.cos().float(), ang.sin().float()

    def _layers(self, tokens: torch.Tensor, past: list[KV] | None) -> tuple[torch.Tensor, list[KV]]:
        start = past[0][0].shape[2] if past else 0
        x = self.token_embd(tokens)
        cos, sin = self._rope_tables(start, tokens.shape[1])
        kvs = []
        for i, block in enumerate(self.blk):
            x, kv = block(x, cos, sin, past[i] if past else None)
            kvs.append(kv)
        return x, kvs

    def hidden(self, tokens: torch.Tensor, prefix: torch.Tensor | None = None) -> torch.Tensor:
        """Final-norm hidden states (B, T, n_embd) for right-padded ``tokens`` (B, T).

        With ``prefix`` (P,), every row of ``tokens`` continues that same prefix: it is run once
        and its keys/values are shared by all rows (same result as prepending it to each row,
        at a fraction of the cost when a long system prompt is common to the batch).
        """
        past = self._layers(prefix[None], None)[1] if prefix is not None and len(prefix) else None
        return self.output_norm(self._layers(tokens, past)[0])

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """Project hidden states (..., n_embd) to the vocabulary."""
        weight = self.output.weight if self.output is not None else self.token_embd.weight
        return F.linear(h, weight)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.logits(self.hidden(tokens))


def from_weights(w: GGUFWeights) -> LlamaModel:
    """Build a frozen :class:`LlamaModel` from f32 GGUF weights."""
    cfg = LlamaConfig.from_weights(w)
    if cfg.rope_dim != cfg.head_dim:
        raise RefineError(f"{w.path.name}: partial RoPE ({cfg.rope_dim}/{cfg.head_dim})")
    model = LlamaModel(cfg, w.tensors)  # type: ignore[arg-type]
    model.requires_grad_(False)
    return model.eval()
