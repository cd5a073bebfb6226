"""The training backend for real bases, on the field's libraries: transformers and peft.

Owns :class:`HFBase`: a base model that transformers loads from the same GGUF file llama.cpp
serves (any architecture transformers reads from GGUF: qwen2, qwen3, qwen3moe, llama, ...), on
CUDA, MPS or the CPU, presented to the trainer through the two calls it uses (``hidden`` and
``logits``) plus the LoRA operations (attach, detach, export, import) that
:mod:`macaron_local.refine.lora` hands to it. LoRA modules come from peft on the linear layers
whose GGUF tensor names match the :class:`~macaron_local.refine.lora.LoraConfig` targets (names
mapped by the ``gguf`` package's tensor name map; fused MoE experts are left out). Export writes
the GGUF LoRA format of :mod:`macaron_local.engine.lora_io` (A (rank, in), B (out, rank), scale
alpha/rank as in peft), permuting Q/K rows only for the llama family, where llama.cpp's rope
layout differs from transformers'. The tokens are the serving tokenizer's (llama.cpp's
vocabulary of the same file), so training sees what serving will send.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from macaron_local.engine.lora_io import LoraFile, read_lora, write_lora
from macaron_local.errors import RefineError

PERMUTED_QK = ("llama",)  # archs whose GGUF Q/K rows are permuted for llama.cpp's rope
# GGUF keys transformers' GGUF loader (5.24) does not read for an arch, by its config name: it
# keeps the config's defaults instead (head_dim 128, moe_intermediate_size 768), so a base of
# other shapes (Qwen3-235B-A22B's experts, any small Qwen3) fails to load with size mismatches.
UNREAD_GGUF_KEYS = {
    "qwen3": {"attention.key_length": "head_dim"},
    "qwen3_moe": {"expert_feed_forward_length": "moe_intermediate_size"},
}


def _read_unread_gguf_keys() -> None:
    """Teach transformers' GGUF config mapping the keys of :data:`UNREAD_GGUF_KEYS` (only
    where it has none of its own, so a transformers that reads them is left alone)."""
    try:
        from transformers.integrations.ggml import GGUF_CONFIG_MAPPING
    except ImportError:  # no transformers: no HFBase either
        return
    mapping: dict[str, dict[str, Any]] = GGUF_CONFIG_MAPPING  # type: ignore[assignment]
    for arch, keys in UNREAD_GGUF_KEYS.items():
        for key, attr in keys.items():
            mapping.get(arch, {}).setdefault(key, attr)


def hf_architectures() -> list[str]:
    """GGUF architectures transformers can load (its own list; ``qwen3moe`` spelled as GGUF)."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return sorted({a.replace("_", "") for a in GGUF_SUPPORTED_ARCHITECTURES})


def _same_network(gguf_path: Path, weights: Path) -> None:
    """Refuse a checkpoint whose shapes are not the served GGUF's: its LoRA would not load."""
    import json

    from macaron_local.engine.gguf_model import inspect_model

    cfg = json.loads((weights / "config.json").read_text())
    shapes = inspect_model(gguf_path).tensor_shapes
    vocab, hidden = shapes["token_embd.weight"][:2]
    layers = 1 + max(int(k.split(".")[1]) for k in shapes if k.startswith("blk."))
    theirs = (cfg.get("hidden_size"), cfg.get("num_hidden_layers"), cfg.get("vocab_size"))
    if theirs != (hidden, layers, vocab):
        raise RefineError(
            f"the training checkpoint in {weights} is not the network of {gguf_path.name}: "
            f"hidden/layers/vocab {theirs[0]}/{theirs[1]}/{theirs[2]} there, "
            f"{hidden}/{layers}/{vocab} in the GGUF",
            hint="point the manifest's [training] repo and revision at this base's checkpoint",
        )


def device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class HFBase:
    """A frozen transformers causal LM for the trainer; LoRA through peft."""

    def __init__(self, model: Any, arch: str) -> None:
        import gguf

        self.hf, self.arch = model, arch
        self.peft: Any = None  # the peft model while a LoRA is attached
        self.device = next(model.parameters()).device
        by_name = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}
        if arch not in by_name:
            raise RefineError(f"the gguf package does not know the architecture {arch!r}")
        self._names = gguf.get_tensor_name_map(by_name[arch], model.config.num_hidden_layers)
        for p in model.parameters():
            p.requires_grad_(False)

    @classmethod
    def load(
        cls, path: Path, arch: str, *, on: str | None = None, weights: Path | None = None
    ) -> HFBase:
        """Load the GGUF at ``path`` with transformers (f32 on the CPU, bf16 on a GPU), or, with
        ``weights``, the base's own checkpoint in that folder (``config.json`` +
        ``*.safetensors``), after checking that it is the same network as the GGUF."""
        from transformers import AutoModelForCausalLM

        where = on or device()
        dtype = torch.float32 if where == "cpu" else torch.bfloat16
        _read_unread_gguf_keys()
        if weights is not None:
            _same_network(path, weights)
            loaded: Any = AutoModelForCausalLM.from_pretrained(str(weights), dtype=dtype)
        else:
            loaded = AutoModelForCausalLM.from_pretrained(
                str(path.parent), gguf_file=path.name, dtype=dtype
            )
        model = loaded.to(where)
        if where != "cpu":
            model.gradient_checkpointing_enable()
            model.enable_input_require_grads()
        return cls(model, arch)

    # --- what the trainer calls ---------------------------------------------------------------

    @property
    def _lm(self) -> Any:
        return self.peft.base_model.model if self.peft is not None else self.hf

    def hidden(self, tokens: torch.Tensor, prefix: torch.Tensor | None = None) -> torch.Tensor:
        """Last hidden states of ``tokens`` (B, T); ``prefix`` (shared by every row) is read
        first and left out of the result."""
        n = 0
        if prefix is not None:
            n = prefix.shape[0]
            tokens = torch.cat([prefix.expand(tokens.shape[0], -1), tokens], dim=1)
        out = self._lm.model(input_ids=tokens.to(self.device)).last_hidden_state
        return out[:, n:]

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return self._lm.get_output_embeddings()(h).cpu()

    def parameters(self) -> Any:
        return self._lm.parameters()

    def named_parameters(self) -> Any:
        return self._lm.named_parameters()

    def train(self) -> HFBase:
        self._lm.train()
        return self

    def eval(self) -> HFBase:
        self._lm.eval()
        return self

    def modules(self) -> Any:
        return self._lm.modules()

    @torch.no_grad()
    def decode_start(self, prompt: list[int], n: int) -> tuple[torch.Tensor, Any]:
        """Read ``prompt`` for ``n`` continuations: (next-token logits (n, vocab), KV state)."""
        out = self._lm(input_ids=torch.tensor([prompt] * n, device=self.device), use_cache=True)
        return out.logits[:, -1].float().cpu(), out.past_key_values

    @torch.no_grad()
    def decode_next(self, tokens: torch.Tensor, past: Any) -> tuple[torch.Tensor, Any]:
        """One token per continuation: (their next-token logits, the grown KV state)."""
        out = self._lm(
            input_ids=tokens[:, None].to(self.device), past_key_values=past, use_cache=True
        )
        return out.logits[:, -1].float().cpu(), out.past_key_values

    # --- LoRA -----------------------------------------------------------------------------------

    def gguf_name(self, module_name: str) -> str | None:
        """``model.layers.3.self_attn.q_proj`` -> ``blk.3.attn_q`` (None: not a GGUF tensor)."""
        return self._names.get_name(module_name.removeprefix("base_model.model."))

    def linears(self) -> dict[str, str]:
        """GGUF module name -> transformers module name, for every plain linear layer."""
        out = {}
        for name, module in self.hf.named_modules():
            gname = self.gguf_name(name) if isinstance(module, nn.Linear) else None
            if gname and gname.startswith("blk."):
                out[gname] = name
        return out

    def attach_lora(self, config: Any, *, seed: int = 0) -> dict[str, Any]:
        from peft import LoraConfig, get_peft_model

        if self.peft is not None:
            raise RefineError("the model already carries a LoRA; detach it first")
        chosen = {g: n for g, n in self.linears().items() if config.matches(g)}
        if not chosen:
            raise RefineError(f"no tensor matches the LoRA targets {list(config.targets)}")
        torch.manual_seed(seed)
        peft_config = LoraConfig(
            r=config.rank,
            lora_alpha=config.alpha,
            lora_dropout=config.dropout,
            target_modules=sorted(chosen.values()),
        )
        self.peft = get_peft_model(self.hf, peft_config)
        self._alpha, self._chosen = float(config.alpha), chosen
        return {f"{g}.weight": n for g, n in chosen.items()}

    def detach_lora(self) -> None:
        if self.peft is not None:
            self.hf = self.peft.unload()
            self.peft = None

    def lora_modules(self) -> dict[str, Any]:
        return {} if self.peft is None else {f"{g}.weight": n for g, n in self._chosen.items()}

    def lora_tensors(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(A, B) per GGUF tensor, GGUF orientation and row order."""
        if self.peft is None:
            raise RefineError("no LoRA attached")
        modules = dict(self.peft.base_model.model.named_modules())
        cfg = self.hf.config
        out = {}
        for gname, name in self._chosen.items():
            layer = modules[name]
            a = layer.lora_A["default"].weight.detach().float().cpu().numpy()
            b = layer.lora_B["default"].weight.detach().float().cpu().numpy()
            if self.arch in PERMUTED_QK and gname.endswith((".attn_q", ".attn_k")):
                heads = cfg.num_attention_heads
                if gname.endswith(".attn_k"):
                    heads = getattr(cfg, "num_key_value_heads", None) or heads
                b = _permute_rows(b, heads)
            out[f"{gname}.weight"] = (np.ascontiguousarray(a), np.ascontiguousarray(b))
        return out

    def export_lora(
        self,
        path: Path | str,
        *,
        arch: str | None = None,
        metadata: dict[str, str] | None = None,
        dtype: str = "f32",
    ) -> Path:
        return write_lora(
            path,
            self.lora_tensors(),
            alpha=self._alpha,
            arch=arch or self.arch,
            dtype=dtype,
            metadata=metadata,
        )

    def import_lora(self, source: Path | str | LoraFile) -> Any:
        """Attach a LoRA with the tensors of a GGUF LoRA (continued training)."""
        from macaron_local.refine.lora import LoraConfig

        lora = source if isinstance(source, LoraFile) else read_lora(source)
        names = sorted({t.removesuffix(".weight") for t in lora.tensors})
        config = LoraConfig(rank=lora.rank, alpha=lora.alpha, targets=tuple(names))
        self.attach_lora(config)
        modules = dict(self.peft.base_model.model.named_modules())
        heads = self.hf.config.num_attention_heads
        with torch.no_grad():
            for tensor, (a, b) in lora.tensors.items():
                gname = tensor.removesuffix(".weight")
                layer = modules[self._chosen[gname]]
                if self.arch in PERMUTED_QK and gname.endswith((".attn_q", ".attn_k")):
                    kv = getattr(self.hf.config, "num_key_value_heads", None) or heads
                    b = _unpermute_rows(b, kv if gname.endswith(".attn_k") else heads)
                layer.lora_A["default"].weight.copy_(torch.from_numpy(np.array(a)))
                layer.lora_B["default"].weight.copy_(torch.from_numpy(np.array(b)))
        return config


def _permute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """transformers' Q/K row order -> llama.cpp's (each head's two rope halves interleaved)."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def _unpermute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    return (
        w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )
