"""A training run's plan, said before it starts: backend, device, memory and time.

Owns :func:`plan` (from the base's header and the train config alone: nothing is loaded) and
:func:`check_fits`, which refuses a run whose memory estimate is over what the device has, with
the reason and what to change. The estimate counts the frozen base weights at the dtype the
backend holds them in, the copy made while they are converted, the activations of one batch
with gradients, the logits of the target tokens (several copies more with a KL anchor) and the
process's fixed cost;
``bench/tall.py`` prints it against the measured peak. The time estimate uses the device's
measured matmul speed and ``4 x parameters x tokens`` FLOPs per step (forward, and a backward
for activations only: the base is frozen) for rows of a typical length; the progress bar's ETA
takes over once steps run.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from macaron_local.errors import RefineError

GIB = 1024**3
TYPICAL_LEN = 192  # tokens in a typical training row (the bundled data); memory takes max_len


@dataclass(frozen=True)
class Plan:
    backend: str  # "gguf-torch" | "transformers+peft"
    device: str
    n_params: int
    memory_bytes: int
    available_bytes: int | None
    steps: int
    seconds: float | None

    def describe(self) -> str:
        have = f" of {self.available_bytes / GIB:.1f} GiB free" if self.available_bytes else ""
        eta = f", about {_duration(self.seconds)}" if self.seconds else ""
        return (
            f"plan: {self.backend} on {self.device}; base {self.n_params / 1e6:.0f}M parameters; "
            f"memory ~{self.memory_bytes / GIB:.1f} GiB{have}; {self.steps} steps{eta}"
        )


def plan(base_path: Path, arch: str, cfg: object, *, steps: int, checkpoint: bool = False) -> Plan:
    """The plan of ``steps`` optimizer steps of ``cfg`` (a TrainConfig) on the base;
    ``checkpoint``: transformers loads the base's own checkpoint, whatever the architecture."""
    from macaron_local.engine.gguf_model import inspect_model
    from macaron_local.refine.arch import ARCHITECTURES

    info = inspect_model(base_path)
    shapes = info.tensor_shapes
    n_params = sum(math.prod(s) for s in shapes.values())
    vocab, hidden = shapes.get("token_embd.weight", (32000, 1024))[:2]
    gguf_space = arch in ARCHITECTURES and not checkpoint
    dev = "cpu" if gguf_space else _hf_device()
    weight_bytes = n_params * (4 if dev == "cpu" else 2)
    seq = int(cfg.max_len)  # type: ignore[attr-defined]
    tokens = int(cfg.batch_size) * seq  # type: ignore[attr-defined]
    ffn = shapes.get("blk.0.ffn_up.weight", (4 * int(hidden), int(hidden)))[0]
    # kept for the backward pass, per token and layer: the residual stream and attention
    # projections (~16 x hidden), the MLP (~3 x ffn) and the attention probabilities (heads x
    # seq, heads ~ hidden / 64); 4 bytes each on transformers (eager attention), 2 in GGUF space
    per = 16 * int(hidden) + 3 * int(ffn) + int(hidden) // 64 * seq
    acts = tokens * max(1, info.n_layer) * per * (2 if gguf_space else 4)
    logits = tokens * int(vocab) * 4 // 4  # targets are about a quarter of the tokens
    if getattr(cfg, "kl_weight", 0):  # the anchor's f32 log-probabilities, their exp and the
        logits *= 7  # KL's intermediates: about six more copies (measured on the L0 run, 1.28x)
    # transformers holds a second copy of the weights while it converts the GGUF (before any
    # activation exists); measured with bench/tall.py, as is the process's fixed cost
    held = weight_bytes * (1.25 if gguf_space else 1.0)
    memory = int(max(held + acts, weight_bytes * 2.0) + logits + GIB)
    flops = _flops_per_s(dev)
    typical = int(cfg.batch_size) * min(int(cfg.max_len), TYPICAL_LEN)  # type: ignore[attr-defined]
    seconds = 4 * n_params * typical * steps / flops if flops else None
    backend = "gguf-torch" if gguf_space else "transformers+peft"
    return Plan(backend, dev, n_params, memory, _available(dev), steps, seconds)


def check_fits(p: Plan) -> None:
    """Refuse a plan over the device's free memory (unknown free memory passes)."""
    if p.available_bytes is not None and p.memory_bytes > p.available_bytes:
        raise RefineError(
            f"this run needs about {p.memory_bytes / GIB:.1f} GiB on {p.device}, "
            f"{p.available_bytes / GIB:.1f} GiB are free",
            hint="lower --batch-size or --max-len, close other programs, or train on a GPU",
        )


def _hf_device() -> str:
    from macaron_local.refine.hf import device

    return device()


def _available(dev: str) -> int | None:
    if dev == "cuda":
        import torch

        return int(torch.cuda.mem_get_info()[0])
    from macaron_local.hostinfo import host_memory_available

    return host_memory_available()


def _flops_per_s(dev: str) -> float | None:
    """This device's f32 (CPU) or bf16 (GPU) matmul speed, measured in a fraction of a second."""
    import torch

    n = 1024 if dev == "cpu" else 4096
    dtype = torch.float32 if dev == "cpu" else torch.bfloat16
    a = torch.randn(n, n, device=dev, dtype=dtype)
    torch.matmul(a, a)  # warm-up
    if dev == "cuda":
        torch.cuda.synchronize()
    start, reps = time.perf_counter(), 4
    for _ in range(reps):
        torch.matmul(a, a)
    if dev == "cuda":
        torch.cuda.synchronize()
    took = time.perf_counter() - start
    return 2 * n**3 * reps / took if took > 0 else None


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
