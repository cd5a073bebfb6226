"""What the terminal app and the assistant exchange: plain items, callbacks and the protocol.

Owns ``AssistantProtocol`` (what a UI may ask of the assistant), the frozen items it returns
(sessions, turns, profiles, models), the callback types, and the small text helpers a UI shows
(``badge``, ``split_remote``, ``NO_REMOTE``). :mod:`macaron_local.facade` re-exports all of it
with the real implementation. Must not: import textual or the runtime at import time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from macaron_local.errors import MacaronError
from macaron_local.learning import ExperienceStatus, RefineHandle

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn
    from macaron_local.genui.actions import Action
    from macaron_local.genui.catalogue import Document
    from macaron_local.remote.hybrid import Notice

ExportFormat = Literal["markdown", "json"]
FeedbackKind = Literal["up", "down", "correction"]
OnRoute = Callable[[str, str], None]  # (label, kind): kind is auto | sticky | manual | fallback
OnText = Callable[[str], None]
OnNotice = Callable[["Notice"], None]  # a remote failover (or wait) the user must be told about
HEAD = "head"
SPECIALISTS = {"L0": "Chat", "L1": "Agent", "L2": "Coding", "L3": "GenUI"}


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


@dataclass(frozen=True)
class TurnItem:
    """A committed turn with everything the chat and the inspector show.

    ``summary`` is the stored summary (None until written); the chat never shows it.
    ``branch`` is this turn's 1-based position among its siblings, of ``branches``.
    """

    id: str
    session_id: str
    parent_id: str | None
    request: str
    answer: str
    label: str
    route_kind: str
    route_probs: dict[str, float]
    adapter_revision: str
    profile_hash: str
    timings: dict[str, float]
    tokens: dict[str, int]
    summary: str | None = None
    branch: int = 1
    branches: int = 1
    meta: dict[str, object] = field(default_factory=dict)
    backend: str = "local"  # local | remote: where the answer hop ran
    failover_reason: str | None = None  # why a turn meant for the remote ran locally


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
    def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        label: str | None = None,
        parent_id: str | None = HEAD,
        on_route: OnRoute | None = None,
        on_text: OnText | None = None,
        cancel: threading.Event | None = None,
        remote: bool = False,
        on_notice: OnNotice | None = None,
    ) -> TurnItem: ...
    def retry(
        self,
        session_id: str,
        *,
        label: str | None = None,
        on_route: OnRoute | None = None,
        on_text: OnText | None = None,
        cancel: threading.Event | None = None,
        on_notice: OnNotice | None = None,
    ) -> TurnItem: ...
    def edit_last(
        self,
        session_id: str,
        text: str,
        *,
        label: str | None = None,
        on_route: OnRoute | None = None,
        on_text: OnText | None = None,
        cancel: threading.Event | None = None,
        on_notice: OnNotice | None = None,
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
        *,
        turn_id: str | None = None,
        on_route: OnRoute | None = None,
        on_text: OnText | None = None,
        cancel: threading.Event | None = None,
    ) -> TurnItem: ...
    def watch_reminders(self, on_due: Callable[[dict[str, Any]], None]) -> None: ...
    def close(self, *, finish_summaries: bool = True) -> None: ...


def badge(
    label: str, route_kind: str, backend: str = "local", failover_reason: str | None = None
) -> str:
    """``L2 Coding · routed``: the specialist and how it was chosen; `` · remote`` for a
    remote answer, `` · local (remote failed: timeout)`` after a failover."""
    how = {"auto": "routed", "manual": "pinned"}.get(route_kind, route_kind)
    text = f"{label} {SPECIALISTS.get(label, label)} · {how}"
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
