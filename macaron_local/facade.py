"""The small typed API the terminal app drives: sessions, history, turns, profiles, models.

Owns ``Assistant``, the real implementation of ``AssistantProtocol`` over
:class:`~macaron_local.turns.pipeline.Runtime` and the store; re-exports the protocol and the
items it returns from :mod:`macaron_local.facade_types`, so a UI imports from here only. The model
loads in a background thread (``start``); the store works at once, so sessions and history are
available before the model is ready. Must not: import textual or the TUI, resolve anything at
import time, or swallow a :class:`MacaronError` (it reaches the UI, which shows it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from macaron_local.errors import ContractError, MacaronError, StoreError, TurnError
from macaron_local.facade_types import (
    HEAD,
    NO_EVENTS,
    NO_REMOTE,
    AdapterItem,
    AssistantProtocol,
    ExportFormat,
    FeedbackKind,
    FeedbackOutcome,
    ModelReport,
    OnNotice,
    ProfileItem,
    ProfileReport,
    SearchItem,
    SessionItem,
    ToolCallRecord,
    TurnEvents,
    TurnItem,
    TurnRecord,
    TurnRequest,
    badge,
    split_remote,
)
from macaron_local.learning import (
    EXPLAINER,
    NOT_KEPT,
    ExperienceStatus,
    RefineHandle,
    RefineOutcome,
    RefineProgress,
)

if TYPE_CHECKING:
    import sqlite_utils

    from macaron_local.agent.tools import ConfirmFn
    from macaron_local.genui.actions import Action
    from macaron_local.genui.catalogue import Catalogue, Document
    from macaron_local.refine.refine_loop import RefineConfig
    from macaron_local.turns.pipeline import Runtime

__all__ = [  # the UI imports everything it needs from here
    "AdapterItem",
    "Assistant",
    "AssistantProtocol",
    "EXPLAINER",
    "ExperienceStatus",
    "ExportFormat",
    "FeedbackKind",
    "FeedbackOutcome",
    "HEAD",
    "ModelReport",
    "NO_EVENTS",
    "NOT_KEPT",
    "NO_REMOTE",
    "OnNotice",
    "ProfileItem",
    "ProfileReport",
    "RefineHandle",
    "RefineOutcome",
    "RefineProgress",
    "SearchItem",
    "SessionItem",
    "ToolCallRecord",
    "TurnEvents",
    "TurnItem",
    "TurnRecord",
    "TurnRequest",
    "badge",
    "split_remote",
]


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
        self._confirm: ConfirmFn | None = None
        self._on_reload: Callable[[str, str], None] | None = None
        self._reminders: Any = None  # the ReminderClock, once the app watches reminders

    def set_confirm(self, confirm: ConfirmFn | None) -> None:
        """Who answers "run this side-effecting tool?" for agent turns and UI tool actions (the
        app's dialog); with nobody set, such calls are declined, never run silently."""
        self._confirm = confirm
        if self._runtime is not None:
            self._runtime.confirm = confirm

    def set_reload_listener(self, listener: Callable[[str, str], None] | None) -> None:
        """Who hears hot reload (``listener(kind, message)``, on a watcher thread: a UI hops to
        its own): ``profile`` / ``plugin`` when an edit is live, ``profile_error`` /
        ``plugin_error`` when a broken one was refused and the old version still serves."""
        self._on_reload = listener

    def _reloaded(self, kind: str, message: str) -> None:
        if self._on_reload is not None:
            self._on_reload(kind, message)

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
            runtime.confirm = self._confirm
            runtime.watch(self._reloaded)  # saved profiles and plugins are live (turns/live.py)
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

    def specialists(self) -> dict[str, str]:
        """Each label of the profile with its name for people (from its adapter's role)."""
        runtime = self._runtime
        profile = runtime.profile if runtime is not None else self._profile_obj()
        return {label: profile.display_name(label) for label in profile.labels}

    def label_for(self, role: str) -> str | None:
        """The profile's label for a role (``agent``, ``coding``, ``genui``...), if it has one."""
        runtime = self._runtime
        profile = runtime.profile if runtime is not None else self._profile_obj()
        return profile.label_for(role)

    def ui_catalogue(self) -> Catalogue:
        """The components a generated UI may use: the built-in ones and the plugins' (the
        runtime's; the built-in catalogue until the model is loaded)."""
        from macaron_local.genui.catalogue import default_catalogue

        runtime = self._runtime
        return runtime.ui_catalogue if runtime is not None else default_catalogue()

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
            raise MacaronError(
                f"the model could not be loaded: {err}",
                hint=err.hint or "check the profile on the Profiles screen",
            )
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

        return [
            SessionItem(s.id, s.title, s.updated_at, s.head_turn_id, s.exclude_from_learning)
            for s in list_sessions(self._db())
        ]

    def search(self, query: str) -> list[SearchItem]:
        from macaron_local.store import search

        return [
            SearchItem(h.session_id, h.session_title, h.turn_id, h.snippet)
            for h in search(self._db(), query)
        ]

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
        """Import a JSON export as a new session; when a chat with its title is already there
        (imported twice, or exported from this store), the new one is titled "… (imported
        copy)" so the two are told apart."""
        from macaron_local.store import import_session, list_sessions, rename_session

        db = self._db()
        sid = import_session(db, text, labels=self._profile_obj().labels)
        sessions = list_sessions(db)
        title = next((s.title for s in sessions if s.id == sid), "")
        if any(s.title == title and s.id != sid for s in sessions):
            rename_session(db, sid, f"{title or 'Untitled'} (imported copy)")
        return sid

    def history(self, session_id: str) -> list[TurnItem]:
        from macaron_local.store import branch, summaries

        db = self._db()
        turns = branch(db, session_id)
        known = summaries(db, [t.id for t in turns])
        return [self._item(t, known[t.id].text if t.id in known else None) for t in turns]

    # --- turns -----------------------------------------------------------------------------

    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnItem:
        """Run one turn, streaming through ``events``; TurnError (rolled back) on cancel.

        ``request.remote`` forces the answer to the remote server (the user's ``/remote``); a
        remote failure reruns it locally and ``events.on_notice`` hears why (the streamed
        remote text is void). ``request.seed`` overrides the profile's sampling seed.
        """
        record = self._rt(events.cancel).run_turn(request, events)
        return self._item(record)

    def _item(self, record: TurnRecord, summary: str | None = None) -> TurnItem:
        from macaron_local.store import siblings

        sibs = [s.id for s in siblings(self._db(), record.id)]
        return TurnItem.of(record, summary, sibs.index(record.id) + 1, len(sibs))

    def _head_turn(self, session_id: str) -> TurnRecord:
        from macaron_local.store import get_session, get_turn

        head = get_session(self._db(), session_id).head_turn_id
        if head is None:
            raise StoreError("this session has no turn yet", hint="ask something first")
        return get_turn(self._db(), head)

    def retry(
        self, session_id: str, events: TurnEvents = NO_EVENTS, *, label: str | None = None
    ) -> TurnItem:
        """Answer the last request again as a new branch (the old answer is kept), with a fresh
        sampling seed (recorded in the turn's meta) so it can differ; a turn the user pinned to
        a specialist (``/code ...``) is retried on the same one unless ``label`` says otherwise.
        """
        import secrets

        last = self._head_turn(session_id)
        if label is None and last.route_kind == "manual":
            label = last.label
        request = TurnRequest(
            session_id,
            last.request,
            label=label,
            parent_id=last.parent_id,
            seed=secrets.randbelow(2**32),
        )
        return self.run_turn(request, events)

    def switch_branch(self, session_id: str, turn_id: str, step: int) -> str | None:
        """Show the sibling ``step`` away from ``turn_id`` (-1 the previous retry or edit, +1
        the next): the session's head moves to the newest turn of that branch, so the choice is
        kept and the next message continues it. Returns the sibling's id, None when there is
        none that way (nothing changes)."""
        from macaron_local.store import get_turn, newest_tip, set_head, siblings

        db = self._db()
        if get_turn(db, turn_id).session_id != session_id:
            raise StoreError(f"turn {turn_id!r} is not in this session")
        ids = [t.id for t in siblings(db, turn_id)]
        at = ids.index(turn_id) + step
        if not 0 <= at < len(ids):
            return None
        set_head(db, session_id, newest_tip(db, ids[at]))
        return ids[at]

    def edit_last(
        self,
        session_id: str,
        text: str,
        events: TurnEvents = NO_EVENTS,
        *,
        label: str | None = None,
    ) -> TurnItem:
        """Replace the last request with ``text`` as a new branch (the old one is kept)."""
        last = self._head_turn(session_id)
        request = TurnRequest(session_id, text, label=label, parent_id=last.parent_id)
        return self.run_turn(request, events)

    def remote_endpoint(self) -> str | None:
        """The endpoint a ``/remote`` turn would use (None: no remote is configured)."""
        runtime = self._runtime
        if runtime is not None:
            return runtime.remote.endpoint(forced=True)
        from macaron_local.hcp import load_profile
        from macaron_local.remote import RemoteHook

        return RemoteHook(load_profile(self._profile)).endpoint(forced=True)

    # --- generated UIs (L3) ----------------------------------------------------------------

    def ui_tool(
        self, session_id: str, action: Action, doc: Document, *, confirm: ConfirmFn | None = None
    ) -> Any:
        """Run a generated UI's ``tool:`` action through the agent's gate: its allowlist and
        confirmation apply (``confirm`` answers for this call, else the runtime's own). NoAI
        values are never passed to the tool. PluginError: the tool is not allowed;
        PermissionError: the user declined."""
        from macaron_local.genui.actions import tool_kwargs
        from macaron_local.genui.serving import agent_label
        from macaron_local.turns.ui_host import RuntimeHost

        name = action.execution.tool
        if action.execution.kind != "tool" or not name:
            raise ContractError("this action does not call a tool", where="ui action")
        runtime = self._rt()
        host = RuntimeHost(
            runtime, session_id, "", tool_label=agent_label(runtime.profile), confirm=confirm
        )
        return host.call_tool(name, tool_kwargs(host.tool_function(name), action, doc))

    def ui_send(
        self,
        session_id: str,
        action: Action,
        doc: Document,
        events: TurnEvents = NO_EVENTS,
        *,
        turn_id: str | None = None,
    ) -> TurnItem:
        """Send a UI submission as a new turn carrying the result of the UI's turn
        (``turn_id``, default the newest GenUI turn of the session), so it skips routing and
        returns to the specialist that drew it. Its text is ``turn_text``: NoAI values are
        withheld before anything reaches a model, a stored turn, a summary or the experience log.
        """
        from macaron_local.genui.actions import turn_text

        if action.execution.kind != "model":
            raise ContractError("this action is not sent to the model", where="ui action")
        runtime = self._rt(events.cancel)
        source = turn_id or self._ui_turn(session_id, runtime)
        request = TurnRequest(session_id, turn_text(action, doc), tool_result_of=source)
        return self.run_turn(request, events)

    def ui_states(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The kept state of these turns' generated UIs: ``{"values": {component id: value},
        "submissions": [{"form", "values", "at"}, ...]}`` for each that has one."""
        from macaron_local.store import ui_states

        return {
            tid: {"values": rec.values, "submissions": rec.submissions}
            for tid, rec in ui_states(self._db(), turn_ids).items()
        }

    def save_ui_state(
        self,
        turn_id: str,
        doc: Document,
        values: dict[str, Any],
        *,
        submitted: str | None = None,
        submitted_values: dict[str, Any] | None = None,
    ) -> int:
        """Keep what the user set in the UI ``turn_id`` drew (``doc``), so a session switch or a
        restart shows it again; ``submitted`` names a form submitted with no handler, kept with
        ``submitted_values`` (its values when submitted). NoAI values are left out: they are
        never stored. Returns how many submissions the UI has kept."""
        from datetime import UTC, datetime

        from macaron_local.store import save_ui_state

        hidden = doc.noai_ids()

        def storable(vals: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in vals.items() if k not in hidden}

        entry = None
        if submitted is not None:
            entry = {
                "form": submitted,
                "values": storable(submitted_values or values),
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        return len(save_ui_state(self._db(), turn_id, storable(values), entry).submissions)

    def _ui_turn(self, session_id: str, runtime: Runtime) -> str:
        """The newest turn of the session's branch answered by the GenUI label."""
        from macaron_local.genui.serving import genui_label
        from macaron_local.store import branch

        label = genui_label(runtime.profile)
        found = [t.id for t in branch(self._db(), session_id) if t.label == label]
        if not found:
            raise StoreError(
                "this session has no generated UI to answer", hint="ask for an interface first"
            )
        return found[-1]

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
        return ProfileReport(
            name, not pending, prof.content_hash, prof.profile.description, pending=pending
        )

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
        from macaron_local.manifests import get_manifest

        m = get_manifest(runtime.profile.base.model)
        adapters = tuple(
            AdapterItem(b.label, b.revision, b.path) for b in runtime.bindings.values()
        )
        return ModelReport(
            m.id,
            m.name,
            m.quantization,
            m.context_length,
            m.sha256,
            adapters,
            tuple(runtime.warnings),
        )

    def feedback(
        self, turn_id: str, kind: FeedbackKind, correction: str | None = None
    ) -> FeedbackOutcome:
        """Keep feedback in the local experience log when the user opted in; the outcome
        says whether it was kept and why not (a StoreError names a turn that is not there)."""
        from macaron_local.experience import enabled, record_feedback

        profile = self._profile_obj()
        kept, message = record_feedback(self._db(), profile, turn_id, kind, correction)
        return FeedbackOutcome(kept, message if kept or enabled(profile) else NOT_KEPT)

    # --- learning after deployment (macaron_local.experience, refine/refine_loop.py) --------------

    def _profile_obj(self) -> Any:
        """The loaded profile (the runtime's, else read from disk while it loads)."""
        from macaron_local.hcp import load_profile

        runtime = self._runtime
        return runtime.profile if runtime is not None else load_profile(self._profile)

    def experience_status(self) -> ExperienceStatus:
        """On or off (and whether the user ever chose), with what is kept."""
        from macaron_local.learning import status_of

        return status_of(self._db(), self._profile_obj())

    def set_experience(self, on: bool) -> ExperienceStatus:
        """Store the user's choice (it wins over the profile's ``[experience] opt_in``)."""
        from macaron_local.experience import set_user_choice

        set_user_choice(on)
        return self.experience_status()

    def purge_experience(self) -> int:
        """Delete every kept turn and signal; how many turns went."""
        from macaron_local.experience import purge

        return purge(self._db())

    def exclude_session(self, session_id: str, excluded: bool) -> int:
        """Mark a chat "do not learn from this chat" (or learn again); marking it deletes
        what was already kept from it. Returns how many kept turns were deleted."""
        from macaron_local.experience import exclude_session

        return exclude_session(self._db(), session_id, excluded)

    def start_refine(self, label: str, *, config: RefineConfig | None = None) -> RefineHandle:
        """Start ``macaron refine run --label`` in the background (niceness 19); poll the
        handle. Its errors (no experience yet...) arrive in ``progress().error``. Its gate
        measures on the runtime's engine (one engine owns llama.cpp), or on one of its own
        while no runtime is loaded."""
        from macaron_local.learning import start_job

        labels = self._profile_obj().labels
        if label not in labels:
            raise ContractError(f"no specialist {label!r}", hint=f"one of {', '.join(labels)}")
        runtime = self._runtime
        return start_job(
            label,
            profile=self._profile_obj(),
            db_path=self._db_path,
            config=config,
            engine=runtime.engine if runtime is not None else None,
        )

    def watch_reminders(self, on_due: Callable[[dict[str, Any]], None]) -> None:
        """Hand each reminder to ``on_due`` when it falls due (those missed while closed at
        once), on a clock thread, until :meth:`close`; also the desktop notifier if present."""
        from macaron_local import paths
        from macaron_local.agent.reminders import ReminderClock

        if self._reminders is None:
            self._reminders = ReminderClock(paths.data_dir(), on_due).start()

    def close(self, *, finish_summaries: bool = True) -> None:
        """Wait for the loader and close the runtime; pending summaries are written first
        unless ``finish_summaries`` is False (then the next start writes them)."""
        if self._reminders is not None:
            self._reminders.stop()
            self._reminders = None
        loader = self._loader
        if loader is not None:
            loader.join()
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.close(finish_summaries=finish_summaries)


def _describe(exc: MacaronError) -> str:
    return f"{exc} (hint: {exc.hint})" if exc.hint else str(exc)
