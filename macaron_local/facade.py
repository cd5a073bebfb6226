"""The small typed API the terminal app drives: sessions, history, turns, profiles, models.

Owns: ``AssistantProtocol`` (what a UI may ask of the assistant) and ``Assistant``, the real
implementation over :class:`~macaron_local.turns.pipeline.Runtime` and the store. The model
loads in a background thread (``start``); the store works at once, so sessions and history are
available before the model is ready. Must not: import textual or the TUI, resolve anything at
import time, or swallow a :class:`MacaronError` (it reaches the UI, which shows it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from macaron_local.errors import ContractError, MacaronError, StoreError, TurnError

if TYPE_CHECKING:
    import sqlite_utils

    from macaron_local.turns.pipeline import Runtime

ExportFormat = Literal["markdown", "json"]
FeedbackKind = Literal["up", "down", "correction"]
OnRoute = Callable[[str, str], None]  # (label, kind): kind is auto | sticky | manual | fallback
OnText = Callable[[str], None]
HEAD = "head"
SPECIALISTS = {"L0": "Chat", "L1": "Agent", "L2": "Coding", "L3": "GenUI"}
NOT_KEPT = ("not kept: experience logging is not available yet, so feedback is not stored "
            "(it will be once you opt in to experience logging)")


@dataclass(frozen=True)
class SessionItem:
    """One conversation as a list shows it."""

    id: str
    title: str
    updated_at: datetime
    head_turn_id: str | None


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
    def run_turn(self, session_id: str, text: str, *, label: str | None = None,
                 parent_id: str | None = HEAD, on_route: OnRoute | None = None,
                 on_text: OnText | None = None,
                 cancel: threading.Event | None = None) -> TurnItem: ...
    def retry(self, session_id: str, *, label: str | None = None,
              on_route: OnRoute | None = None, on_text: OnText | None = None,
              cancel: threading.Event | None = None) -> TurnItem: ...
    def edit_last(self, session_id: str, text: str, *, label: str | None = None,
                  on_route: OnRoute | None = None, on_text: OnText | None = None,
                  cancel: threading.Event | None = None) -> TurnItem: ...
    def profiles(self) -> list[ProfileItem]: ...
    def check_profile(self, name: str) -> ProfileReport: ...
    def switch_profile(self, name: str) -> None: ...
    def model_report(self) -> ModelReport | None: ...
    def feedback(self, turn_id: str, kind: FeedbackKind,
                 correction: str | None = None) -> FeedbackOutcome: ...
    def close(self) -> None: ...


class Assistant:
    """The real assistant: a :class:`Runtime` opened in the background plus the store."""

    def __init__(self, profile: str | None = None, *, db_path: Path | None = None) -> None:
        from macaron_local import paths
        from macaron_local.turns.pipeline import DEFAULT_PROFILE

        self._profile = profile or DEFAULT_PROFILE
        self._db_path = db_path or paths.db_path()
        self._runtime: Runtime | None = None
        self._error: MacaronError | None = None
        self._status = "not started"
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._loader: threading.Thread | None = None

    # --- readiness -------------------------------------------------------------------------

    def start(self) -> None:
        """Open the runtime in a background thread (idempotent)."""
        with self._lock:
            if self._loader is not None:
                return
            self._status = f"loading {self._profile}…"
            self._loader = threading.Thread(target=self._load, daemon=True, name="open-runtime")
            self._loader.start()

    def _load(self) -> None:
        from macaron_local.turns.pipeline import Runtime

        try:
            runtime = Runtime.open(self._profile, db_path=self._db_path)
        except MacaronError as exc:
            self._error, self._status = exc, f"model not loaded: {exc}"
        except Exception as exc:  # noqa: BLE001 - a load crash must reach the UI as a notice
            self._error = MacaronError(f"{type(exc).__name__}: {exc}")
            self._status = f"model not loaded: {exc}"
        else:
            self._runtime, self._status = runtime, f"ready · {self._profile}"
        finally:
            self._ready.set()

    @property
    def ready(self) -> bool:
        return self._runtime is not None

    @property
    def status(self) -> str:
        return self._status

    @property
    def load_error(self) -> MacaronError | None:
        return self._error

    @property
    def profile_name(self) -> str:
        return self._profile

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.start()
        self._ready.wait(timeout)
        return self.ready

    def _rt(self, cancel: threading.Event | None = None) -> Runtime:
        while not self._ready.wait(0.1):
            if cancel is not None and cancel.is_set():
                raise TurnError("the turn was cancelled; the session is as it was before it")
        if self._runtime is None:
            err = self._error or MacaronError("the model is not loaded")
            raise MacaronError(f"the model could not be loaded: {err}",
                               hint=err.hint or "check the profile on the Profiles screen")
        return self._runtime

    # --- store -----------------------------------------------------------------------------

    def _db(self) -> sqlite_utils.Database:
        db = getattr(self._local, "db", None)
        if db is None:
            from macaron_local.store import open_db

            db = self._local.db = open_db(self._db_path)
        return db

    def list_sessions(self) -> list[SessionItem]:
        from macaron_local.store import list_sessions

        return [SessionItem(s.id, s.title, s.updated_at, s.head_turn_id)
                for s in list_sessions(self._db())]

    def search(self, query: str) -> list[SearchItem]:
        from macaron_local.store import search

        return [SearchItem(h.session_id, h.session_title, h.turn_id, h.snippet)
                for h in search(self._db(), query)]

    def create_session(self, title: str = "") -> SessionItem:
        from macaron_local.store import create_session

        s = create_session(self._db(), title, profile_id=self._profile)
        return SessionItem(s.id, s.title, s.updated_at, s.head_turn_id)

    def rename_session(self, session_id: str, title: str) -> None:
        from macaron_local.store import rename_session

        rename_session(self._db(), session_id, title)

    def delete_session(self, session_id: str) -> None:
        from macaron_local.store import delete_session

        delete_session(self._db(), session_id)

    def restore_session(self, session_id: str) -> None:
        from macaron_local.store import restore_session

        restore_session(self._db(), session_id)

    def export_session(self, session_id: str, fmt: ExportFormat) -> str:
        from macaron_local.store import export_session

        return export_session(self._db(), session_id, fmt)

    def import_session(self, text: str) -> str:
        from macaron_local.store import import_session

        return import_session(self._db(), text)

    def history(self, session_id: str) -> list[TurnItem]:
        from macaron_local.store import branch, summaries

        db = self._db()
        turns = branch(db, session_id)
        known = summaries(db, [t.id for t in turns])
        return [_item(db, t, known[t.id].text if t.id in known else None) for t in turns]

    # --- turns -----------------------------------------------------------------------------

    def run_turn(self, session_id: str, text: str, *, label: str | None = None,
                 parent_id: str | None = HEAD, on_route: OnRoute | None = None,
                 on_text: OnText | None = None,
                 cancel: threading.Event | None = None) -> TurnItem:
        """Run one turn, streaming through ``on_text``; TurnError (rolled back) on cancel."""
        runtime = self._rt(cancel)
        result = runtime.run_turn(
            session_id, text, label=label, parent_id=parent_id, on_text=on_text, cancel=cancel,
            on_route=(lambda r: on_route(r.label, r.kind)) if on_route else None)
        from macaron_local.store import get_turn

        return _item(self._db(), get_turn(self._db(), result.turn), None)

    def _head_turn(self, session_id: str):  # noqa: ANN202 - a store TurnRecord
        from macaron_local.store import get_session, get_turn

        head = get_session(self._db(), session_id).head_turn_id
        if head is None:
            raise StoreError("this session has no turn yet", hint="ask something first")
        return get_turn(self._db(), head)

    def retry(self, session_id: str, *, label: str | None = None,
              on_route: OnRoute | None = None, on_text: OnText | None = None,
              cancel: threading.Event | None = None) -> TurnItem:
        """Answer the last request again as a new branch (the old answer is kept)."""
        last = self._head_turn(session_id)
        return self.run_turn(session_id, last.request, label=label, parent_id=last.parent_id,
                             on_route=on_route, on_text=on_text, cancel=cancel)

    def edit_last(self, session_id: str, text: str, *, label: str | None = None,
                  on_route: OnRoute | None = None, on_text: OnText | None = None,
                  cancel: threading.Event | None = None) -> TurnItem:
        """Replace the last request with ``text`` as a new branch (the old one is kept)."""
        last = self._head_turn(session_id)
        return self.run_turn(session_id, text, label=label, parent_id=last.parent_id,
                             on_route=on_route, on_text=on_text, cancel=cancel)

    # --- profiles and models ---------------------------------------------------------------

    def profiles(self) -> list[ProfileItem]:
        from macaron_local.hcp import list_profiles

        return [ProfileItem(p.name, p.origin, p.path) for p in list_profiles()]

    def check_profile(self, name: str) -> ProfileReport:
        """Load ``name``: its hash, or its validation errors, and pending approvals."""
        from macaron_local.hcp import load_profile, pending_changes

        try:
            prof = load_profile(name)
        except ContractError as exc:
            return ProfileReport(name, False, errors=(_describe(exc),))
        pending = tuple(f"{c.path}: {c.reason}" for c in pending_changes(self._db(), prof))
        return ProfileReport(name, not pending, prof.content_hash, prof.profile.description,
                             pending=pending)

    def switch_profile(self, name: str) -> None:
        """Close the current runtime and open ``name`` in the background."""
        with self._lock:
            old, self._runtime, self._error = self._runtime, None, None
            self._profile, self._loader = name, None
            self._ready.clear()
        if old is not None:
            old.close()
        self.start()

    def model_report(self) -> ModelReport | None:
        """The base model and served adapters (None until the runtime is ready)."""
        runtime = self._runtime
        if runtime is None:
            return None
        from macaron_local.models import get_manifest

        m = get_manifest(runtime.profile.base.model)
        adapters = tuple(AdapterItem(b.label, b.revision, b.path)
                         for b in runtime.bindings.values())
        return ModelReport(m.id, m.name, m.quantization, m.context_length, m.sha256, adapters,
                           tuple(runtime.warnings))

    def feedback(self, turn_id: str, kind: FeedbackKind,
                 correction: str | None = None) -> FeedbackOutcome:
        """Experience logging does not exist yet: nothing is kept, and the outcome says so."""
        from macaron_local.store import get_turn

        get_turn(self._db(), turn_id)  # a StoreError names a turn that is not there
        return FeedbackOutcome(False, NOT_KEPT)

    def close(self) -> None:
        """Wait for the loader and close the runtime (pending summaries are written first)."""
        loader = self._loader
        if loader is not None:
            loader.join()
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.close()


def _describe(exc: MacaronError) -> str:
    return f"{exc} (hint: {exc.hint})" if exc.hint else str(exc)


def _item(db: sqlite_utils.Database, t, summary: str | None) -> TurnItem:  # noqa: ANN001
    from macaron_local.store import siblings

    sibs = [s.id for s in siblings(db, t.id)]
    return TurnItem(
        id=t.id, session_id=t.session_id, parent_id=t.parent_id, request=t.request,
        answer=t.answer, label=t.label, route_kind=t.route_kind, route_probs=t.route_probs,
        adapter_revision=t.adapter_revision, profile_hash=t.profile_hash, timings=t.timings,
        tokens=t.tokens, summary=summary, branch=sibs.index(t.id) + 1, branches=len(sibs),
        meta=dict(t.meta))


def badge(label: str, route_kind: str) -> str:
    """``L2 Coding · routed``: the specialist and how it was chosen."""
    how = {"auto": "routed", "manual": "pinned"}.get(route_kind, route_kind)
    return f"{label} {SPECIALISTS.get(label, label)} · {how}"
