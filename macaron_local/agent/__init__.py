"""The L1 agent substrate: a sandboxed persistent REPL, host-side tools, the toolsmith and loop.

Names resolve lazily: the REPL child imports ``macaron_local.agent.sandbox`` and must not pull
in the rest of the runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "SandboxPolicy": "macaron_local.agent.sandbox",
    "Repl": "macaron_local.agent.repl",
    "ReplResult": "macaron_local.agent.repl",
    "ToolSpec": "macaron_local.agent.tools",
    "ToolRegistry": "macaron_local.agent.tools",
    "ToolGate": "macaron_local.agent.tools",
    "ToolContext": "macaron_local.agent.tools",
    "tool_context": "macaron_local.agent.tools",
    "use_context": "macaron_local.agent.tools",
    "Toolsmith": "macaron_local.agent.toolsmith",
    "AgentOutcome": "macaron_local.agent.agent_loop",
    "ToolCall": "macaron_local.agent.agent_loop",
    "run_agent": "macaron_local.agent.agent_loop",
    "extract_block": "macaron_local.agent.agent_loop",
    "AgentSession": "macaron_local.agent.session",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'macaron_local.agent' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
