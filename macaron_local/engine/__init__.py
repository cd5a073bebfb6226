"""llama.cpp ownership: the Mixture-of-LoRA engine, GGUF model/LoRA files, grammars, tokens."""

from macaron_local.engine.engine import (
    BACKGROUND,
    INTERACTIVE,
    ROUTE,
    SUMMARY,
    Engine,
    EngineConfig,
)
from macaron_local.engine.types import GREEDY, AdapterInfo, Completion, Sampling
from macaron_local.engine.worker import Stream

__all__ = [
    "BACKGROUND",
    "GREEDY",
    "INTERACTIVE",
    "ROUTE",
    "SUMMARY",
    "AdapterInfo",
    "Completion",
    "Engine",
    "EngineConfig",
    "Sampling",
    "Stream",
]
