"""A scripted assistant implementing ``AssistantProtocol`` for Pilot and snapshot tests.

Deterministic: ids are ``s1``, ``t1``, ...; answers depend only on the request; "code" in a
request routes to L2 with a fenced Python block. ``fail_next`` makes the next turn fail;
``hold`` keeps a turn streaming until released (to cancel it); ``piece_delay`` slows the stream.
Cancelling behaves like the pipeline: nothing is kept and TurnError is raised.
"remind" in a request routes to L1, whose turn carries two tool calls (``SCRIPTED_STEPS``: a
failed one, then one that worked), as the agent loop records them.
Experience: ``experience_choice`` is the user's choice (default False, so the first-run
explainer stays away; None shows it); when on, every committed turn of a chat that is not
excluded counts as kept. ``start_refine`` returns a ``ScriptedRefine`` the test moves by hand.
Remote: ``remote_url`` is the configured endpoint (None: none); a ``remote=True`` turn is
answered "remotely" (``backend="remote"``) unless ``remote_fail`` names a failover reason: then
a few words stream, a failover ``Notice`` says they are discarded, and the turn reruns locally.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from macaron_local.errors import MacaronError, PluginError, StoreError, TurnError
from macaron_local.facade import (
    HEAD,
    NO_EVENTS,
    NOT_KEPT,
    AdapterItem,
    ExperienceStatus,
    FeedbackOutcome,
    ModelReport,
    OnNotice,
    ProfileItem,
    ProfileReport,
    RefineOutcome,
    RefineProgress,
    SearchItem,
    SessionItem,
    ToolCallRecord,
    TurnEvents,
    TurnItem,
    TurnRequest,
)
from macaron_local.genui.catalogue import Catalogue, default_catalogue
from macaron_local.remote.hybrid import Notice
from macaron_local.turns.route import RouteResult

OnText = Callable[[str], None] | None
ROLES = {"L0": ("chat", "Chat"), "L1": ("agent", "Agent"), "L2": ("coding", "Coding")}
ROLES |= {"L3": ("genui", "GenUI")}  # the bundled profile's labels and roles

EPOCH = datetime(2026, 1, 1, 12, 0, 0)
PROBS = {"L0": 0.05, "L1": 0.05, "L2": 0.05, "L3": 0.05}


def _add_note(text: str) -> str:
    return f"saved a note of {len(text)} characters"


SCRIPTED_TOOLS: dict[str, Callable[..., Any]] = {"notes.add": _add_note}


# (code, result, status) of the agent's steps for a "remind" request
SCRIPTED_STEPS = (
    ('reminders.search("mom")', "AttributeError: module 'reminders' has no attribute 'search'",
     "error"),
    ('r = reminders.add("call mom", "2026-01-01T17:00")\nprint(r["id"], r["due"])',
     "1 2026-01-01T17:00", "ok"),
)  # fmt: skip


def script(text: str) -> tuple[str, str]:
    """(label, answer) for a request."""
    if "remind" in text.lower():
        return "L1", "I set a reminder for 17:00 today: call mom."
    if "code" in text.lower():
        return "L2", (
            "Here is a function:\n\n```python\ndef reverse(items):\n"
            "    return items[::-1]\n```\n\nIt returns a reversed copy."
        )
    return "L0", f"You said: **{text}**. That is a fine thing to say."


@dataclass
class _Session:
    item: SessionItem
    deleted: bool = False
    turns: list[TurnItem] = field(default_factory=list)


class ScriptedAssistant:
    """In-memory sessions and scripted turns, streamed word by word."""

    def __init__(self, *, ready: bool = True, piece_delay: float = 0.0) -> None:
        self._ready = ready
        self.piece_delay = piece_delay
        self.sessions: dict[str, _Session] = {}
        self.fail_next: MacaronError | None = None
        self.hold: threading.Event | None = None  # set() releases a held turn
        self.streaming = threading.Event()  # set while a turn is streaming
        self.feedback_calls: list[tuple[str, str, str | None]] = []
        self.profile = "tall-local"
        self.remote_url: str | None = None
        self.remote_fail: str | None = None  # a failover reason for the next remote turns
        self.closed = False
        self.experience_choice: bool | None = False
        self.kept: dict[str, str] = {}  # turn id -> label, for turns kept while opted in
        self.refines: list[ScriptedRefine] = []
        self.confirm: Callable[[str, dict], bool] | None = None
        self.tool_calls: list[tuple[str, dict]] = []
        self.ui_sent: list[tuple[str | None, str]] = []
        self._n = 0
        self.started = False
        self.summaries_written = True  # False: every summary is still being written
        self.ui_kept: dict[str, dict[str, Any]] = {}  # turn id -> generated UI state
        self.catalogue = default_catalogue()  # what generated UIs may use (a test adds to it)

    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    # --- readiness -------------------------------------------------------------------------

    def start(self) -> None:
        self.started = True

    def make_ready(self) -> None:
        self._ready = True

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def status(self) -> str:
        return f"ready · {self.profile}" if self._ready else f"loading {self.profile}…"

    @property
    def load_error(self) -> MacaronError | None:
        return None

    @property
    def profile_name(self) -> str:
        return self.profile

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready

    # --- sessions --------------------------------------------------------------------------

    def _live(self) -> list[_Session]:
        return [s for s in self.sessions.values() if not s.deleted]

    def _get(self, session_id: str) -> _Session:
        if session_id not in self.sessions:
            raise StoreError(f"no session {session_id!r}")
        return self.sessions[session_id]

    def list_sessions(self) -> list[SessionItem]:
        return [s.item for s in sorted(self._live(), key=lambda s: s.item.updated_at, reverse=True)]

    def search(self, query: str) -> list[SearchItem]:
        q = query.lower().strip()
        hits = [
            SearchItem(s.item.id, s.item.title, None, s.item.title)
            for s in self._live()
            if q in s.item.title.lower()
        ]
        for s in self._live():
            hits += [
                SearchItem(s.item.id, s.item.title, t.id, t.request)
                for t in s.turns
                if q in (t.request + t.answer).lower()
            ]
        return hits

    def create_session(self, title: str = "") -> SessionItem:
        sid = self._id("s")
        item = SessionItem(sid, title, EPOCH + timedelta(minutes=self._n), None)
        self.sessions[sid] = _Session(item)
        return item

    def rename_session(self, session_id: str, title: str) -> None:
        s = self._get(session_id)
        s.item = replace(s.item, title=title)

    def delete_session(self, session_id: str) -> None:
        self._get(session_id).deleted = True

    def restore_session(self, session_id: str) -> None:
        self._get(session_id).deleted = False

    def export_session(self, session_id: str, fmt: str) -> str:
        s = self._get(session_id)
        if fmt == "json":
            return json.dumps(
                {
                    "kind": "scripted",
                    "title": s.item.title,
                    "turns": [[t.request, t.answer] for t in self.history(s.item.id)],
                }
            )
        body = "".join(
            f"### You\n\n{t.request}\n\n### {t.label}\n\n{t.answer}\n\n"
            for t in self.history(session_id)
        )
        return f"# {s.item.title}\n\n{body}"

    def import_session(self, text: str) -> str:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StoreError(f"not a JSON export: {exc}", hint="import a .json export") from exc
        new = self.create_session(doc["title"] + " (imported)")
        for request, answer in doc["turns"]:
            label, _ = script(request)
            self._commit(new.id, request, answer, label, "auto", HEAD)
        return new.id

    def history(self, session_id: str) -> list[TurnItem]:
        s = self._get(session_id)
        by_id = {t.id: t for t in s.turns}
        chain, at = [], s.item.head_turn_id
        while at is not None:
            chain.append(by_id[at])
            at = by_id[at].parent_id
        return [self._with_branch(s, t) for t in reversed(chain)]

    def _with_branch(self, s: _Session, t: TurnItem) -> TurnItem:
        sibs = [x.id for x in s.turns if x.parent_id == t.parent_id]
        summary = f"summary of {t.request!r}" if self.summaries_written else None
        update = {"branch": sibs.index(t.id) + 1, "branches": len(sibs), "summary": summary}
        return t.model_copy(update=update)

    # --- turns -----------------------------------------------------------------------------

    def specialists(self) -> dict[str, str]:
        return {label: name for label, (_, name) in ROLES.items()}

    def label_for(self, role: str) -> str | None:
        return next((label for label, (r, _) in ROLES.items() if r == role), None)

    def ui_catalogue(self) -> Catalogue:
        return self.catalogue

    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnItem:
        self._get(request.session_id)
        while not self._ready:  # like the real one: a turn waits for the model
            self._wait(events.cancel)
            time.sleep(0.01)
        routed, answer = script(request.text)
        kind = "manual" if request.label else "auto"
        label = request.label or routed
        events.routed(RouteResult(label, kind))
        if self.fail_next is not None:
            err, self.fail_next = self.fail_next, None
            raise TurnError(f"the {label} answer failed: {err}; nothing was saved")
        backend, failover = self._remote(
            answer, request.remote, events.on_text, events.on_notice, events.cancel
        )
        self.streaming.set()
        try:
            if backend == "local":
                self._stream(answer, events.on_text, events.cancel)
        finally:
            self.streaming.clear()
        return self._commit(
            request.session_id, request.text, answer, label, kind, request.parent_id, backend,
            failover,
        )  # fmt: skip

    def _stream(self, answer: str, on_text: OnText, cancel: threading.Event | None) -> None:
        for i, word in enumerate(answer.split(" ")):
            self._wait(cancel)
            if on_text:
                on_text(word if i == 0 else " " + word)
            if self.hold is not None and i == 2:
                while not self.hold.wait(0.02):
                    self._wait(cancel)

    def _remote(
        self,
        answer: str,
        remote: bool,
        on_text: OnText,
        on_notice: OnNotice | None,
        cancel: threading.Event | None,
    ) -> tuple[str, str | None]:
        """(backend, failover reason) like the hybrid hook: a remote answer streams here."""
        tell = on_notice or (lambda _n: None)
        if not remote:
            return "local", None
        if self.remote_url is None:
            tell(
                Notice(
                    "failover",
                    "remote failed: no remote endpoint is set; answering locally",
                    "no_endpoint",
                )
            )
            return "local", "no_endpoint"
        if self.remote_fail is None:
            self._stream(answer, on_text, cancel)
            return "remote", None
        partial = " ".join(answer.split(" ")[:3])
        if on_text:
            on_text(partial)
        tell(
            Notice(
                "failover",
                f"remote failed: HTTP 500 from the server; {len(partial)} "
                "characters of its partial answer were discarded; answering locally",
                self.remote_fail,
                len(partial),
            )
        )
        return "local", self.remote_fail

    def _wait(self, cancel: threading.Event | None) -> None:
        if self.piece_delay:
            time.sleep(self.piece_delay)
        if cancel is not None and cancel.is_set():
            raise TurnError("the turn was cancelled; the session is as it was before it")

    def _commit(
        self,
        session_id: str,
        text: str,
        answer: str,
        label: str,
        kind: str,
        parent_id: str | None,
        backend: str = "local",
        failover: str | None = None,
    ) -> TurnItem:
        s = self._get(session_id)
        parent = s.item.head_turn_id if parent_id == HEAD else parent_id
        probs = {**PROBS, label: 0.85} if kind == "auto" else {}
        item = TurnItem(
            created_at=EPOCH + timedelta(minutes=self._n),
            id=self._id("t"),
            session_id=session_id,
            parent_id=parent,
            request=text,
            answer=answer,
            label=label,
            route_kind=kind,
            route_probs=probs,
            adapter_revision="base",
            profile_hash="ab" * 32,
            timings={"route_ms": 12.0, "ttft_ms": 30.0, "answer_ms": 80.0, "total_ms": 95.0},
            tokens={"prompt": 40, "cached": 0, "completion": len(answer.split()), "route": 2},
            backend=backend,
            failover_reason=failover,
            meta=_meta(backend, failover),
        )
        if label == "L1" and "remind" in text.lower():
            item = item.model_copy(update={"tool_calls": _steps(item)})
        s.turns.append(item)
        if self.experience_choice and not s.item.excluded:
            self.kept[item.id] = label
        s.item = replace(
            s.item, head_turn_id=item.id, updated_at=EPOCH + timedelta(minutes=self._n)
        )
        return self._with_branch(s, item)

    def _last(self, session_id: str) -> TurnItem:
        turns = self.history(session_id)
        if not turns:
            raise StoreError("this session has no turn yet", hint="ask something first")
        return turns[-1]

    def retry(
        self, session_id: str, events: TurnEvents = NO_EVENTS, *, label: str | None = None
    ) -> TurnItem:
        last = self._last(session_id)  # like the facade: a pinned turn is retried pinned
        label = label or (last.label if last.route_kind == "manual" else None)
        request = TurnRequest(session_id, last.request, label=label, parent_id=last.parent_id)
        return self.run_turn(request, events)

    def edit_last(
        self,
        session_id: str,
        text: str,
        events: TurnEvents = NO_EVENTS,
        *,
        label: str | None = None,
    ) -> TurnItem:
        last = self._last(session_id)
        request = TurnRequest(session_id, text, label=label, parent_id=last.parent_id)
        return self.run_turn(request, events)

    def switch_branch(self, session_id: str, turn_id: str, step: int) -> str | None:
        s = self._get(session_id)
        turn = next(t for t in s.turns if t.id == turn_id)
        ids = [t.id for t in s.turns if t.parent_id == turn.parent_id]
        at = ids.index(turn_id) + step
        if not 0 <= at < len(ids):
            return None
        tip = ids[at]
        while children := [t.id for t in s.turns if t.parent_id == tip]:
            tip = children[-1]
        s.item = replace(s.item, head_turn_id=tip)
        return ids[at]

    def remote_endpoint(self) -> str | None:
        return self.remote_url

    # --- profiles, models, feedback --------------------------------------------------------

    def profiles(self) -> list[ProfileItem]:
        from pathlib import Path

        return [
            ProfileItem("broken", "user", Path("/profiles/broken.toml")),
            ProfileItem("tall-local", "bundled", Path("/bundled/tall-local.toml")),
            ProfileItem("wide-tools", "user", Path("/profiles/wide-tools.toml")),
        ]

    def check_profile(self, name: str) -> ProfileReport:
        if name == "broken":
            return ProfileReport(name, False, errors=("broken.toml line 3: invalid TOML",))
        if name == "wide-tools":
            return ProfileReport(
                name,
                False,
                "cd" * 32,
                "more tools",
                pending=("tools.allow.L1: a wider tool allowlist",),
            )
        return ProfileReport(name, True, "ab" * 32, "the embedded default")

    def switch_profile(self, name: str) -> None:
        self.profile = name

    def model_report(self) -> ModelReport | None:
        adapters = tuple(AdapterItem(lb, "base", None) for lb in ("L0", "L1", "L2", "L3"))
        return ModelReport(
            "smollm2-135m-instruct-q4_1",
            "SmolLM2-135M-Instruct",
            "Q4_1",
            8192,
            "0" * 64,
            adapters,
            ("L3: scripted warning",),
        )

    def feedback(self, turn_id: str, kind: str, correction: str | None = None) -> FeedbackOutcome:
        self.feedback_calls.append((turn_id, kind, correction))
        if not self.experience_choice:
            return FeedbackOutcome(False, NOT_KEPT)
        if turn_id not in self.kept:
            return FeedbackOutcome(False, "not kept: this turn is not in the experience log")
        what = {"up": "thumbs up", "down": "thumbs down", "correction": "your correction"}
        return FeedbackOutcome(True, f"kept {what[kind]} locally for learning")

    # --- learning --------------------------------------------------------------------------

    def experience_status(self) -> ExperienceStatus:
        per_label: dict[str, int] = {}
        for label in self.kept.values():
            per_label[label] = per_label.get(label, 0) + 1
        excluded = sum(1 for s in self._live() if s.item.excluded)
        return ExperienceStatus(
            self.experience_choice,
            bool(self.experience_choice),
            turns=len(self.kept),
            per_label=per_label,
            excluded_sessions=excluded,
        )

    def set_experience(self, on: bool) -> ExperienceStatus:
        self.experience_choice = on
        return self.experience_status()

    def purge_experience(self) -> int:
        n, self.kept = len(self.kept), {}
        return n

    def exclude_session(self, session_id: str, excluded: bool) -> int:
        s = self._get(session_id)
        s.item = replace(s.item, excluded=excluded)
        if not excluded:
            return 0
        gone = [t.id for t in s.turns if t.id in self.kept]
        for turn_id in gone:
            del self.kept[turn_id]
        return len(gone)

    def start_refine(self, label: str) -> ScriptedRefine:
        run = ScriptedRefine(label)
        self.refines.append(run)
        return run

    # --- tools and generated UIs ------------------------------------------------------------

    def set_confirm(self, confirm: Callable[[str, dict], bool] | None) -> None:
        self.confirm = confirm

    def ui_tool(
        self,
        session_id: str,
        action: Any,
        doc: Any,
        *,
        confirm: Callable[[str, dict], bool] | None = None,
    ) -> Any:
        """Like the real one: only allowlisted tools, and side effects ask first."""
        from macaron_local.genui.actions import tool_kwargs

        self._get(session_id)
        name = action.execution.tool or ""
        if name not in SCRIPTED_TOOLS:
            raise PluginError(f"tool {name!r} is not allowed for L1 in this profile")
        ask = confirm or self.confirm
        func = SCRIPTED_TOOLS[name]
        args = tool_kwargs(func, action, doc)
        if ask is None or not ask(name, args):
            raise PermissionError(f"{name} was declined")
        self.tool_calls.append((name, args))
        return func(**args)

    def ui_send(
        self,
        session_id: str,
        action: Any,
        doc: Any,
        events: TurnEvents = NO_EVENTS,
        *,
        turn_id: str | None = None,
    ) -> TurnItem:
        """A sticky L3 turn carrying the submission (``turn_text``: no NoAI values)."""
        from macaron_local.genui.actions import turn_text

        text = turn_text(action, doc)
        events.routed(RouteResult("L3", "sticky"))
        answer = f"Got it: {text}"
        self._stream(answer, events.on_text, events.cancel)
        self.ui_sent.append((turn_id, text))
        return self._commit(session_id, text, answer, "L3", "sticky", HEAD)

    def watch_reminders(self, on_due: Callable[[dict[str, Any]], None]) -> None:
        """The real reminder clock over this home's personal.db (as the real assistant)."""
        from macaron_local import paths
        from macaron_local.agent.reminders import ReminderClock

        if getattr(self, "reminders", None) is None:
            self.reminders = ReminderClock(paths.data_dir(), on_due, every_s=0.2).start()

    def ui_states(self, turn_ids: list[str]) -> dict[str, dict[str, Any]]:
        return {t: self.ui_kept[t] for t in turn_ids if t in self.ui_kept}

    def save_ui_state(
        self,
        turn_id: str,
        doc: Any,
        values: dict[str, Any],
        *,
        submitted: str | None = None,
        submitted_values: dict[str, Any] | None = None,
    ) -> int:
        """Like the facade: NoAI values are never kept."""
        hidden = doc.noai_ids()
        kept = self.ui_kept.setdefault(turn_id, {"values": {}, "submissions": []})
        kept["values"] = {k: v for k, v in values.items() if k not in hidden}
        if submitted is not None:
            vals = submitted_values or values
            kept["submissions"].append(
                {"form": submitted, "values": {k: v for k, v in vals.items() if k not in hidden}}
            )
        return len(kept["submissions"])

    def close(self, *, finish_summaries: bool = True) -> None:
        self.closed = True
        if getattr(self, "reminders", None) is not None:
            self.reminders.stop()


class ScriptedRefine:
    """A ``RefineHandle`` that moves only when the test says: ``advance``, ``finish``."""

    def __init__(self, label: str, total: int = 4) -> None:
        self.label, self.total, self.step = label, total, 0
        self.lines: list[str] = [f"{label}: sft 6, pairs 6 (parent base)"]
        self.cancelled = False
        self.outcome: RefineOutcome | None = None
        self.error: str | None = None  # set by ``fail``, like a run that raised

    def advance(self, steps: int = 1) -> None:
        for _ in range(steps):
            self.step += 1
            self.lines.append(f"  step {self.step}/{self.total} sft 1.{9 - self.step}")
            if self.cancelled:  # like the loop: stops between steps, registers nothing
                self.outcome = RefineOutcome(
                    "cancelled",
                    f"cancelled at step {self.step}/{self.total}; nothing was "
                    "registered (run it again to resume)",
                )
                return

    def finish(self) -> None:
        self.step = self.total
        self.outcome = RefineOutcome(
            "kept",
            "rev-abc kept unpromoted: held-out nll improved by less than 0.01",
            revision="rev-abc",
            reasons=("held-out nll improved by less than 0.01",),
            figures=(("heldout.nll", 2.5, 2.45), ("regression.route_acc", 0.9, None)),
            plots=("/runs/L0-x/loss.png", "/runs/L0-x/gate.png"),
            report_json="/runs/L0-x/report.json",
        )

    def fail(self, error: str) -> None:
        self.error = error

    def progress(self) -> RefineProgress:
        return RefineProgress(
            self.label,
            self.step,
            self.total,
            tuple(self.lines),
            done=self.outcome is not None or self.error is not None,
            cancelling=self.cancelled and self.outcome is None,
            error=self.error,
        )

    def cancel(self) -> None:
        self.cancelled = True

    def report(self) -> RefineOutcome | None:
        return self.outcome


def _steps(item: TurnItem) -> tuple[ToolCallRecord, ...]:
    return tuple(
        ToolCallRecord(
            id=f"{item.id}-c{i}", turn_id=item.id, created_at=item.created_at, step=i,
            label=item.label, code=code, result=result, status=status,
        )
        for i, (code, result, status) in enumerate(SCRIPTED_STEPS)
    )  # fmt: skip


def _meta(backend: str, failover: str | None) -> dict[str, object]:
    if backend == "remote":
        return {"heavy": "forced", "remote_model": "Macaron-V1-Venti"}
    if failover is not None:
        detail = "no remote endpoint is set" if failover == "no_endpoint" else "HTTP 500"
        return {"heavy": "forced", "failover_reason": failover, "failover_detail": detail}
    return {}
