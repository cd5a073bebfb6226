"""A scripted assistant implementing ``AssistantProtocol`` for Pilot and snapshot tests.

Deterministic: ids are ``s1``, ``t1``, ...; answers depend only on the request; "code" in a
request routes to L2 with a fenced Python block. ``fail_next`` makes the next turn fail;
``hold`` keeps a turn streaming until released (to cancel it); ``piece_delay`` slows the stream.
Cancelling behaves like the pipeline: nothing is kept and TurnError is raised.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from macaron_local.errors import MacaronError, StoreError, TurnError
from macaron_local.facade import (
    HEAD,
    NOT_KEPT,
    AdapterItem,
    FeedbackOutcome,
    ModelReport,
    OnRoute,
    OnText,
    ProfileItem,
    ProfileReport,
    SearchItem,
    SessionItem,
    TurnItem,
)

EPOCH = datetime(2026, 1, 1, 12, 0, 0)
PROBS = {"L0": 0.05, "L1": 0.05, "L2": 0.05, "L3": 0.05}


def script(text: str) -> tuple[str, str]:
    """(label, answer) for a request."""
    if "code" in text.lower():
        return "L2", ("Here is a function:\n\n```python\ndef reverse(items):\n"
                      "    return items[::-1]\n```\n\nIt returns a reversed copy.")
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
        self.closed = False
        self._n = 0
        self.started = False

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
        return [s.item for s in sorted(self._live(), key=lambda s: s.item.updated_at,
                                       reverse=True)]

    def search(self, query: str) -> list[SearchItem]:
        q = query.lower().strip()
        hits = [SearchItem(s.item.id, s.item.title, None, s.item.title)
                for s in self._live() if q in s.item.title.lower()]
        for s in self._live():
            hits += [SearchItem(s.item.id, s.item.title, t.id, t.request)
                     for t in s.turns if q in (t.request + t.answer).lower()]
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
            return json.dumps({"kind": "scripted", "title": s.item.title,
                               "turns": [[t.request, t.answer] for t in self.history(s.item.id)]})
        body = "".join(f"### You\n\n{t.request}\n\n### {t.label}\n\n{t.answer}\n\n"
                       for t in self.history(session_id))
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
        return replace(t, branch=sibs.index(t.id) + 1, branches=len(sibs),
                       summary=f"summary of {t.request!r}")

    # --- turns -----------------------------------------------------------------------------

    def run_turn(self, session_id: str, text: str, *, label: str | None = None,
                 parent_id: str | None = HEAD, on_route: OnRoute | None = None,
                 on_text: OnText | None = None,
                 cancel: threading.Event | None = None) -> TurnItem:
        self._get(session_id)
        while not self._ready:  # like the real one: a turn waits for the model
            self._wait(cancel)
            time.sleep(0.01)
        routed, answer = script(text)
        kind = "manual" if label else "auto"
        label = label or routed
        if on_route:
            on_route(label, kind)
        if self.fail_next is not None:
            err, self.fail_next = self.fail_next, None
            raise TurnError(f"the {label} answer failed: {err}; nothing was saved")
        self.streaming.set()
        try:
            for i, word in enumerate(answer.split(" ")):
                self._wait(cancel)
                if on_text:
                    on_text(word if i == 0 else " " + word)
                if self.hold is not None and i == 2:
                    while not self.hold.wait(0.02):
                        self._wait(cancel)
        finally:
            self.streaming.clear()
        return self._commit(session_id, text, answer, label, kind, parent_id)

    def _wait(self, cancel: threading.Event | None) -> None:
        if self.piece_delay:
            time.sleep(self.piece_delay)
        if cancel is not None and cancel.is_set():
            raise TurnError("the turn was cancelled; the session is as it was before it")

    def _commit(self, session_id: str, text: str, answer: str, label: str, kind: str,
                parent_id: str | None) -> TurnItem:
        s = self._get(session_id)
        parent = s.item.head_turn_id if parent_id == HEAD else parent_id
        probs = {**PROBS, label: 0.85} if kind == "auto" else {}
        item = TurnItem(
            id=self._id("t"), session_id=session_id, parent_id=parent, request=text,
            answer=answer, label=label, route_kind=kind, route_probs=probs,
            adapter_revision="base", profile_hash="ab" * 32,
            timings={"route_ms": 12.0, "ttft_ms": 30.0, "answer_ms": 80.0, "total_ms": 95.0},
            tokens={"prompt": 40, "cached": 0, "completion": len(answer.split()), "route": 2})
        s.turns.append(item)
        s.item = replace(s.item, head_turn_id=item.id,
                         updated_at=EPOCH + timedelta(minutes=self._n))
        return self._with_branch(s, item)

    def _last(self, session_id: str) -> TurnItem:
        turns = self.history(session_id)
        if not turns:
            raise StoreError("this session has no turn yet", hint="ask something first")
        return turns[-1]

    def retry(self, session_id: str, *, label: str | None = None,
              on_route: OnRoute | None = None, on_text: OnText | None = None,
              cancel: threading.Event | None = None) -> TurnItem:
        last = self._last(session_id)
        return self.run_turn(session_id, last.request, label=label, parent_id=last.parent_id,
                             on_route=on_route, on_text=on_text, cancel=cancel)

    def edit_last(self, session_id: str, text: str, *, label: str | None = None,
                  on_route: OnRoute | None = None, on_text: OnText | None = None,
                  cancel: threading.Event | None = None) -> TurnItem:
        last = self._last(session_id)
        return self.run_turn(session_id, text, label=label, parent_id=last.parent_id,
                             on_route=on_route, on_text=on_text, cancel=cancel)

    # --- profiles, models, feedback --------------------------------------------------------

    def profiles(self) -> list[ProfileItem]:
        from pathlib import Path

        return [ProfileItem("broken", "user", Path("/profiles/broken.toml")),
                ProfileItem("tall-local", "bundled", Path("/bundled/tall-local.toml")),
                ProfileItem("wide-tools", "user", Path("/profiles/wide-tools.toml"))]

    def check_profile(self, name: str) -> ProfileReport:
        if name == "broken":
            return ProfileReport(name, False, errors=("broken.toml line 3: invalid TOML",))
        if name == "wide-tools":
            return ProfileReport(name, False, "cd" * 32, "more tools",
                                 pending=("tools.allow.L1: a wider tool allowlist",))
        return ProfileReport(name, True, "ab" * 32, "the embedded default")

    def switch_profile(self, name: str) -> None:
        self.profile = name

    def model_report(self) -> ModelReport | None:
        adapters = tuple(AdapterItem(lb, "base", None) for lb in ("L0", "L1", "L2", "L3"))
        return ModelReport("smollm2-135m-instruct-q4_1", "SmolLM2-135M-Instruct", "Q4_1", 8192,
                           "0" * 64, adapters, ("L3: scripted warning",))

    def feedback(self, turn_id: str, kind: str, correction: str | None = None) -> FeedbackOutcome:
        self.feedback_calls.append((turn_id, kind, correction))
        return FeedbackOutcome(False, NOT_KEPT)

    def close(self) -> None:
        self.closed = True
