"""macaron-local: the runtime's public facade.

The TUI, the CLI and plugins reach the runtime through these names only. Nothing is imported
eagerly (importing the package loads no native library and opens nothing): each name resolves
on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Engine": "macaron_local.engine",
    "EngineConfig": "macaron_local.engine",
    "Sampling": "macaron_local.engine",
    "Completion": "macaron_local.engine",
    "MacaronError": "macaron_local.errors",
    "embedded_model_file": "macaron_local.manifests",
    "Assistant": "macaron_local.facade",
    "AssistantProtocol": "macaron_local.facade",
    "TurnItem": "macaron_local.facade",
    "Runtime": "macaron_local.turns.pipeline",
    "TurnRecord": "macaron_local.store.records",
    "TurnRequest": "macaron_local.turns.turn",
    "TurnEvents": "macaron_local.turns.turn",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'macaron_local' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
