"""Typed records the store reads and writes (pydantic v2, frozen, no extra fields).

Owns: the shapes that cross the store's boundary. Must not: touch the database. The ``*Record``
models are what the store returns; ``NewTurn`` / ``NewToolCall`` are what a caller hands to
``commit_turn`` (the store adds ids, the session, the parent and the time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RouteKind = Literal["auto", "sticky", "manual", "fallback"]
Backend = Literal["local", "remote"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SessionRecord(_Frozen):
    """One conversation. Its current branch ends at ``head_turn_id`` (None: no turn yet)."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    head_turn_id: str | None
    profile_id: str | None
    exclude_from_learning: bool
    deleted_at: datetime | None


class NewToolCall(_Frozen):
    """One finished tool call made while answering a turn (``step`` orders them, from 0)."""

    step: int = Field(ge=0)
    label: str
    code: str
    result: str
    status: str = Field(min_length=1)


class ToolCallRecord(NewToolCall):
    """A committed tool call."""

    id: str
    turn_id: str
    created_at: datetime


class NewTurn(_Frozen):
    """A finished turn, as the pipeline hands it to ``commit_turn``.

    ``timings`` are milliseconds: ``ttft_ms`` (first answer text) and ``total_ms`` (commit) from
    the user's send, and the parts ``route_ms``, ``view_ms`` (with ``summary_wait_ms``) and
    ``answer_ms`` (the answer request);
    ``tokens`` are counts (``prompt``, ``cached``, ``completion``, ``route``, ``summary``).
    ``tool_result_of`` is the turn whose tool call this (sticky) turn carries the result of.
    """

    request: str
    answer: str
    label: str = Field(min_length=1)
    route_kind: RouteKind
    route_probs: dict[str, float] = Field(default_factory=dict)
    adapter_revision: str
    profile_hash: str
    backend: Backend = "local"
    failover_reason: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    compacted: bool = False
    tool_result_of: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class TurnRecord(NewTurn):
    """A committed turn: the one shape a turn has from the store through the runtime and the
    facade to the UI, the CLI and the server. ``parent_id`` is the previous turn on its branch
    (None: the first). ``tool_calls`` are the agent's steps, in order (a separate table: not
    part of the row, so never in a dump unless asked for)."""

    id: str
    session_id: str
    parent_id: str | None
    created_at: datetime
    tool_calls: tuple[ToolCallRecord, ...] = Field(default=(), exclude=True)

    @property
    def failed_calls(self) -> int:
        """How many of this turn's tool calls did not succeed (the badge marks such a turn)."""
        return sum(1 for call in self.tool_calls if call.status not in ("ok", "declined"))


class SummaryRecord(_Frozen):
    """The summary the answering adapter wrote of one turn; never shown in the chat."""

    turn_id: str
    label: str
    text: str
    n_tokens: int = Field(ge=0)
    adapter_revision: str
    created_at: datetime


class SearchHit(_Frozen):
    """A full-text match: in a turn (``turn_id`` set) or in a session title (``turn_id`` None).

    ``snippet`` marks the matched words with ``[`` and ``]``.
    """

    session_id: str
    session_title: str
    turn_id: str | None
    snippet: str


class RecoveryReport(_Frozen):
    """What ``recover`` found and did at start.

    ``removed_turns`` are turns whose session or parent was gone (their summaries and tool calls
    went with them); ``removed_summaries`` / ``removed_tool_calls`` count the other orphans.
    """

    integrity: str
    removed_turns: int = 0
    removed_summaries: int = 0
    removed_tool_calls: int = 0
    cleared_tool_result_refs: int = 0
    fixed_heads: int = 0
    rebuilt_fts: tuple[str, ...] = ()
    pending_summaries: int = 0

    @property
    def repaired(self) -> bool:
        """True if recovery had to change anything."""
        return bool(
            self.removed_turns
            or self.removed_summaries
            or self.removed_tool_calls
            or self.cleared_tool_result_refs
            or self.fixed_heads
            or self.rebuilt_fts
        )
