"""What the terminal app and the assistant exchange: plain items, callbacks and the protocol.

Owns ``AssistantProtocol`` (what a UI may ask of the assistant), the frozen items it returns
(sessions, turns, profiles, models), the callback types, and the small text helpers a UI shows
(``badge``, ``split_remote``, ``NO_REMOTE``). :mod:`macaron_local.facade` re-exports all of it
with the real implementation. Must not: import textual or the runtime at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from macaron_local.errors import MacaronError
from macaron_local.learning import ExperienceStatus, RefineHandle
from macaron_local.store.records import ToolCallRecord, TurnRecord
from macaron_local.turns.turn import HEAD, NO_EVENTS, TurnEvents, TurnRequest

__all__ = ["HEAD", "NO_EVENTS", "ToolCallRecord", "TurnEvents", "TurnRecord", "TurnRequest"]

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn
    from macaron_local.genui.actions import Action
    from macaron_local.genui.catalogue import Catalogue, Document
    from macaron_local.remote.hybrid import Notice

ExportFormat = Literal["markdown", "json"]
FeedbackKind = Literal["up", "down", "correction"]
OnNotice = Callable[["Notice"], None]  # a remote failover (or wait) the user must be told about


@dataclass(frozen=True)
class SessionItem:
    """One conversation as a list shows it (``excluded``: "do not learn from this chat")."""

    id: str
    title: str
    updated_at: datetime
    head_turn_id: str | None
    excluded: bool = False


@dataclass(frozen=True)
class SearchItem:
    """A full-text hit: a session title (``turn_id`` None) or a turn; ``[`` ``]`` mark words."""

    session_id: str
    session_title: str
    turn_id: str | None
    snippet: str


class TurnItem(TurnRecord):
    """A committed turn with everything the chat and the inspector show: the store's record
    (its tool calls included) plus ``summary`` (None until written; the chat never shows it)
    and ``branch``, this turn's 1-based position among its siblings, of ``branches``."""

    summary: str | None = None
    branch: int = 1
    branches: int = 1

    @classmethod
    def of(
        cls, record: TurnRecord, summary: str | None = None, branch: int = 1, branches: int = 1
    ) -> TurnItem:
        fields = {name: getattr(record, name) for name in TurnRecord.model_fields}
        return cls(**fields, summary=summary, branch=branch, branches=branches)


@dataclass(frozen=True)
class ProfileItem:
    """A profile on disk: ``origin`` is bundled | user | file."""

    name: str
    origin: str
    path: Path


@dataclass(frozen=True)
class ProfileReport:
    """A profile's validation: ``errors`` (it cannot load) and ``pending`` approvals."""

    name: str
    ok: bool
    content_hash: str = ""
    description: str = ""
    errors: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()


@dataclass(frozen=True)
class AdapterItem:
    """Which adapter revision serves a label (``base``: the base weights)."""

    label: str
    revision: str
    path: Path | None


@dataclass(frozen=True)
class ModelReport:
    """The base model, the served adapters and warnings from loading them."""

    model_id: str
    name: str
    quantization: str | None
    context_length: int
    sha256: str
    adapters: tuple[AdapterItem, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackOutcome:
    """Whether feedback was kept, and a sentence saying so."""

    kept: bool
    message: str


@runtime_checkable
class AssistantProtocol(Protocol):
    """Everything the UI may ask. Calls may block (the UI calls them from workers)."""

    def start(self) -> None: ...
    @property
    def ready(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def load_error(self) -> MacaronError | None: ...
    @property
    def profile_name(self) -> str: ...
    def specialists(self) -> dict[str, str]: ...
    def label_for(self, role: str) -> str | None: ...
    def ui_catalogue(self) -> Catalogue: ...
    def wait_ready(self, timeout: float | None = None) -> bool: ...
    def list_sessions(self) -> list[SessionItem]: ...
    def search(self, query: str) -> list[SearchItem]: ...
    def create_session(self, title: str = "") -> SessionItem: ...
    def rename_session(self, session_id: str, title: str) -> None: ...
    def delete_session(self, session_id: str) -> None: ...
    def restore_session(self, session_id: str) -> None: ...
    def export_session(self, session_id: str, fmt: ExportFormat) -> str: ...
    def import_session(self, text: str) -> str: ...
    def history(self, session_id: str) -> list[TurnItem]: ...
    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnItem: ...
    def retry(
        self, session_id: str, events: TurnEvents = NO_EVENTS, *, label: str | None = None
    ) -> TurnItem: ...
    def edit_last(
        self,
        session_id: str,
        text: str,
        events: TurnEvents = NO_EVENTS,
        *,
        label: str | None = None,
    ) -> TurnItem: ...
    def switch_branch(self, session_id: str, turn_id: str, step: int) -> str | None: ...
    def ui_states(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]: ...
    def save_ui_state(
        self,
        turn_id: str,
        doc: Any,
        values: dict[str, Any],
        *,
        submitted: str | None = None,
        submitted_values: dict[str, Any] | None = None,
    ) -> int: ...
    def remote_endpoint(self) -> str | None: ...
    def profiles(self) -> list[ProfileItem]: ...
    def check_profile(self, name: str) -> ProfileReport: ...
    def switch_profile(self, name: str) -> None: ...
    def model_report(self) -> ModelReport | None: ...
    def feedback(
        self, turn_id: str, kind: FeedbackKind, correction: str | None = None
    ) -> FeedbackOutcome: ...
    # learning after deployment (docs/learning.md)
    def experience_status(self) -> ExperienceStatus: ...
    def set_experience(self, on: bool) -> ExperienceStatus: ...
    def purge_experience(self) -> int: ...
    def exclude_session(self, session_id: str, excluded: bool) -> int: ...
    def start_refine(self, label: str) -> RefineHandle: ...
    # tools: who confirms side effects; generated UIs' tool and model actions (docs/genui.md)
    def set_confirm(self, confirm: ConfirmFn | None) -> None: ...
    def ui_tool(
        self, session_id: str, action: Action, doc: Document, *, confirm: ConfirmFn | None = None
    ) -> Any: ...
    def ui_send(
        self,
        session_id: str,
        action: Action,
        doc: Document,
        events: TurnEvents = NO_EVENTS,
        *,
        turn_id: str | None = None,
    ) -> TurnItem: ...
    def watch_reminders(self, on_due: Callable[[dict[str, Any]], None]) -> None: ...
    def close(self, *, finish_summaries: bool = True) -> None: ...


def badge(
    label: str,
    route_kind: str,
    backend: str = "local",
    failover_reason: str | None = None,
    *,
    name: str = "",
    failed_calls: int = 0,
) -> str:
    """``L2 Coding · routed``: the specialist (``name`` from the profile's roles) and how it
    was chosen; `` · remote`` for a remote answer, `` · local (remote failed: timeout)``
    after a failover, `` · 2 tool calls failed`` when the agent's calls did."""
    how = {"auto": "routed", "manual": "pinned"}.get(route_kind, route_kind)
    text = f"{label} {name} · {how}" if name else f"{label} · {how}"
    if failed_calls:
        text += f" · {failed_calls} tool call{'s' if failed_calls > 1 else ''} failed"
    if backend == "remote":
        return text + " · remote"
    if failover_reason:
        return text + f" · local (remote failed: {failover_reason})"
    return text


def split_remote(text: str) -> tuple[str, bool]:
    """``"/remote write a parser"`` -> ``("write a parser", True)``; other text unchanged."""
    from macaron_local.remote.policy import split_remote_command

    return split_remote_command(text)


NO_REMOTE = (
    "No remote server is configured: set the profile's [remote] endpoint or "
    "MACARON_REMOTE_URL, and give it a key with `macaron remote login` "
    "(or MACARON_REMOTE_API_KEY); see docs/remote.md"
)
