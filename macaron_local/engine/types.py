"""Plain values that cross the engine boundary: sampling settings, completions, adapter facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Sampling:
    """Sampling settings for one request. ``temperature <= 0`` means greedy."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    seed: int = 0


GREEDY = Sampling()


@dataclass
class Completion:
    """What one request produced, with the counts and timings the turn record keeps."""

    text: str = ""
    tokens: list[int] = field(default_factory=list)
    finish_reason: str = ""  # "eog" | "stop" | "length" | "cancelled"
    n_prompt: int = 0  # tokens in the prompt
    n_reused: int = 0  # prompt tokens whose KV was reused from this slot's previous request
    n_evaluated: int = 0  # prompt tokens actually evaluated for this request
    queue_s: float = 0.0  # waiting for the engine
    prompt_s: float = 0.0  # evaluating the prompt
    ttft_s: float = 0.0  # submit -> first token
    total_s: float = 0.0  # submit -> done
    step_logits: list[np.ndarray] = field(default_factory=list)  # only when asked for

    @property
    def n_generated(self) -> int:
        return len(self.tokens)


@dataclass(frozen=True)
class AdapterInfo:
    """A LoRA adapter loaded into the engine."""

    name: str
    path: Path
    rank: int
    alpha: float
    targets: tuple[str, ...]
    scale: float = 1.0
    base_sha256: str | None = None
