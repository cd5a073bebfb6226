"""Hybrid mode: a remote OpenAI-compatible (Venti) server for heavy turns, failover to local.

The public surface of the package; ``client`` speaks HTTP, ``health`` gates retries, ``policy``
says which turns are heavy, ``hybrid`` is the hook the turn pipeline calls, ``cli`` is
``macaron remote``. Must not: import the TUI, or open anything at import time.
"""

from __future__ import annotations

from macaron_local.remote.client import (
    REASONS,
    ChatRequest,
    RemoteClient,
    RemoteCompletion,
    RemoteFailure,
)
from macaron_local.remote.health import Health, HealthState
from macaron_local.remote.hybrid import Attempt, Notice, Plan, RemoteHook, conversation_id
from macaron_local.remote.policy import (
    Heavy,
    expected_answer_tokens,
    heavy_reason,
    split_remote_command,
)

__all__ = [
    "REASONS",
    "Attempt",
    "ChatRequest",
    "Health",
    "HealthState",
    "Heavy",
    "Notice",
    "Plan",
    "RemoteClient",
    "RemoteCompletion",
    "RemoteFailure",
    "RemoteHook",
    "conversation_id",
    "expected_answer_tokens",
    "heavy_reason",
    "split_remote_command",
]
