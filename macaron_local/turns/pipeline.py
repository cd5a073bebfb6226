"""The runtime: one profile, one engine, one store, and the turn that runs through them.

A turn reads as one straight line: checkpoint (the session head) -> route (the router label,
unless pinned or sticky) -> the answer step (``_answer``: the local view, the backend plan, then
the remote, the agent loop or one local answer, streaming) -> one store transaction commits the
turn -> the summary hop runs in the background and is saved on its own. Nothing is written
before the commit, so an error, a cancel or a killed process leaves the session exactly as it
was before the turn. Callers hand a :class:`TurnRequest` and :class:`TurnEvents`; they get the
committed :class:`TurnRecord` back, the one shape a turn has everywhere.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import sqlite_utils

from macaron_local import paths
from macaron_local.agent.session import AgentSession, repl_warnings
from macaron_local.agent.tools import ConfirmFn
from macaron_local.engine import Completion, Engine, EngineConfig, Sampling
from macaron_local.errors import (
    CancelledError,
    ContextOverflowError,
    GrammarError,
    MacaronError,
    TurnError,
)
from macaron_local.genui.extend import with_plugins
from macaron_local.genui.serving import GrammarCache, action_tools, agent_label, genui_label
from macaron_local.hcp import Profile, check_approved, load_profile
from macaron_local.hcp.schema import Resources
from macaron_local.manifests import get_manifest, verified_path
from macaron_local.remote.client import RemoteCompletion
from macaron_local.remote.hybrid import REMOTE_CTX, Attempt, Notice, RemoteHook
from macaron_local.store import (
    NewToolCall,
    NewTurn,
    SessionRecord,
    TurnRecord,
    branch,
    commit_turn,
    create_session,
    get_session,
    get_turn,
    open_db,
    recover,
    summaries,
)
from macaron_local.store.db import unicode_problem
from macaron_local.turns import adapters as adapter_bindings
from macaron_local.turns.act import ActOutcome, act
from macaron_local.turns.answer import answer, room, sampling, visible
from macaron_local.turns.live import LiveReload, OnEvent
from macaron_local.turns.route import ROUTE_SLOT, RouteResult, route, route_messages
from macaron_local.turns.summaries import SummaryHops
from macaron_local.turns.summary import provisional_summary
from macaron_local.turns.tools import load_plugins, tool_descriptions
from macaron_local.turns.turn import HEAD, NO_EVENTS, TurnEvents, TurnRequest
from macaron_local.turns.views import View, build_view

log = logging.getLogger(__name__)
OnText = Callable[[str], None]

DEFAULT_PROFILE = "tall-local"
IDLE_REPL_S = 900.0  # an agent's REPL unused this long is closed (memory), its loss said
IDLE_NOTE = (
    "Note: this conversation's Python REPL was restarted after being idle; variables and "
    "imports from earlier turns are gone (the tools and your files are still there)."
)


class Runtime(SummaryHops):
    """The facade the CLI, the TUI and the server drive. Thread-safe for concurrent turns."""

    def __init__(
        self,
        profile: Profile,
        engine: Engine,
        db_path: Path,
        bindings: dict[str, adapter_bindings.Binding],
        warnings: list[str],
    ) -> None:
        self.profile = profile
        self.engine = engine
        self.db_path = db_path
        self.bindings = bindings
        self.warnings = warnings
        self.plugins, self.registry, plugin_warnings = load_plugins()
        self.warnings += plugin_warnings
        self.warnings += repl_warnings(profile)  # no OS sandbox: the REPL is off
        self.profile_ref: str | Path = profile.source or profile.id  # what hot reload reloads
        self.reload_error: str | None = None  # a broken edit, while the old profile serves
        self._live: LiveReload | None = None
        self.tools: Mapping[str, str] = tool_descriptions(self.registry)
        self.confirm: ConfirmFn | None = None  # set by the UI / CLI
        self._heads: tuple[int, ...] | None = None  # first tokens of the route labels
        self.remote = RemoteHook(profile)  # heavy turns to a remote server, failover to local
        self._agents: dict[str, AgentSession] = {}
        self._agents_used: dict[str, float] = {}  # key -> monotonic time of the last use
        self._agents_idled: set[str] = set()  # closed for idleness: the next turn is told
        self._agents_lock = threading.Lock()
        self._turn_confirm: dict[str, ConfirmFn] = {}  # agent key -> its running turn's answerer
        self._local = threading.local()
        self._init_summaries()
        # what the GenUI label draws with: the built-in components and the plugins'
        self.ui_catalogue, ui_warnings = with_plugins(self.plugins.components())
        self.warnings += ui_warnings
        self.ui_grammars = GrammarCache()  # its answer grammar, built once per catalogue+tools

    @classmethod
    def open(
        cls,
        profile: str | Path | None = None,
        *,
        db_path: Path | None = None,
        engine: Engine | None = None,
    ) -> Runtime:
        """Build the runtime for a profile: approval gate, verified base, adapters, store."""
        prof = load_profile(profile or DEFAULT_PROFILE)
        db_path = db_path or paths.db_path()
        db = open_db(db_path)
        check_approved(db, prof)
        recover(db)
        manifest = get_manifest(prof.base.model)
        if engine is None:
            engine = Engine(
                verified_path(prof.base.model),
                engine_config(prof.resources, len(prof.labels)),
                base_sha256=manifest.sha256,
            )
        bindings, warnings = adapter_bindings.load(
            engine, prof, adapter_bindings.resolve(prof, manifest), manifest.sha256
        )
        runtime = cls(prof, engine, db_path, bindings, warnings)
        runtime.profile_ref = profile or DEFAULT_PROFILE
        runtime._local.db = db
        runtime._warm_router()
        return runtime

    def _warm_router(self) -> None:
        """Get the router's fixed prompt into its slot before the first route: restored from the
        prefix saved by an earlier start (a few ms), or read in the background and saved (~2 s on
        2 cores). The first route of the process then costs only the request's own tokens."""
        msgs = route_messages(self.profile, "", self.tools)
        router = self.profile.router_label
        adapter = self.bindings[router].adapter if router in self.bindings else None
        try:
            self.engine.prefill(
                self.engine.render_chat(msgs),
                adapter=adapter,
                slot=ROUTE_SLOT,
                cache_dir=paths.cache_dir() / "kv",
            )
        except MacaronError as exc:  # a route that cannot start falls back at turn time anyway
            log.warning("router warm-up: %s", exc)

    def watch(self, on_event: OnEvent | None = None) -> None:
        """Hot reload (``turns/live.py``): a saved profile or plugin is live for the next turn,
        a broken one keeps the old and is reported. Idempotent; stopped by ``close``."""
        if self._live is None:
            self._live = LiveReload(self, on_event).start()

    def reset_caches(self) -> None:
        """Forget what was derived from the profile or the tools (after a reload)."""
        self._heads = None

    # --- store access (one connection per thread) -------------------------------------------

    def db(self) -> sqlite_utils.Database:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = open_db(self.db_path)
        return db

    def new_session(self, title: str = "") -> SessionRecord:
        return create_session(self.db(), title, profile_id=self.profile.id)

    # --- the turn ----------------------------------------------------------------------------

    def route(self, text: str, previous: TurnRecord | None = None) -> RouteResult:
        """The route hop; ``previous`` (the conversation's last turn) goes with the request,
        so a follow-up ("now make it skip negatives") goes where the conversation is."""
        router = self.profile.router_label
        return route(
            self.engine,
            self.profile,
            text,
            adapter=self.bindings[router].adapter if router in self.bindings else None,
            tools=self.tools,
            previous=(previous.label, previous.request) if previous is not None else None,
        )

    def run_turn(self, request: TurnRequest, events: TurnEvents = NO_EVENTS) -> TurnRecord:
        """Run one turn; returns its committed record. Raises :class:`TurnError` (rolled back).

        A heavy turn (or ``request.remote``, the user's ``/remote``) is answered by the remote
        server; if that fails, ``events.on_notice`` hears why and the answer runs locally.
        """
        clock = TurnClock(time.perf_counter())  # the user's send: every timing counts from here
        events = replace(events, on_text=clock.stamping(events.on_text))
        if (problem := unicode_problem(request.text)) is not None:  # bad argv, a JSON escape
            raise TurnError(f"the request is not valid Unicode text ({problem}); nothing was saved")
        db = self.db()
        head = get_session(db, request.session_id).head_turn_id  # the checkpoint
        parent = head if request.parent_id == HEAD else request.parent_id  # retry/edit: a branch
        history = branch(db, request.session_id, parent) if parent else []
        decision = self._decide(request, db, history[-1] if history else None)
        events.routed(decision)
        binding = self.bindings[decision.label]
        seed = self._seed(decision.label, request.seed)
        try:  # the view may not fit (ContextOverflowError): that too is a rolled-back TurnError
            answered = self._answer(request, events, decision.label, binding, history, seed, clock)
        except CancelledError as exc:
            raise TurnError("the turn was cancelled; the session is as it was before it") from exc
        except MacaronError as exc:
            raise TurnError(
                f"the {decision.label} answer failed: {exc}; nothing was saved"
            ) from exc
        if not visible(answered.done.text) and not answered.calls:
            raise TurnError(f"the {decision.label} answer was empty; nothing was saved")
        record = commit_turn(
            db,
            request.session_id,
            self._new_turn(request, decision, binding, answered, clock, seed),
            answered.calls,
            expected_head=head,
            parent_id=parent,
        )
        self._remember(db, record, events)
        remote = answered.attempt.done is not None
        self._summarize_later(record, answered.for_summary, binding, remote=remote)
        return record

    def _answer(
        self,
        request: TurnRequest,
        events: TurnEvents,
        label: str,
        binding: adapter_bindings.Binding,
        history: list[TurnRecord],
        seed: int,
        clock: TurnClock,
    ) -> Answered:
        """The answer step of a turn: the local view, the backend plan, then the remote answer
        (a heavy turn), the agent loop (a label with tools) or one local answer."""
        provisional: set[str] = set()  # turns whose summary the view had to stand in for
        try:
            local, error = self._view(label, history, request.text, None, provisional, clock), None
        except ContextOverflowError as exc:
            local, error = None, exc
        uses_tools = bool(self.profile.tool_patterns(label))
        plan = self.remote.plan(
            label,
            request.text,
            fits_locally=local is not None,
            compacted=local is not None and local.compacted > 0,
            forced=request.remote,
            adapter_loaded=binding.adapter is not None,
            uses_tools=uses_tools,
        )
        if plan.notice:
            events.notice(Notice("local", plan.notice))
        attempt = Attempt()
        if plan.remote:
            view = local
            if plan.long_view or view is None:
                view = self._view(label, history, request.text, REMOTE_CTX, provisional, clock)
            attempt = self.remote.answer_remote(
                plan,
                view.messages,
                request.session_id,
                on_text=events.on_text,
                on_notice=events.on_notice,
                cancel=events.cancel,
            )
            if attempt.done is not None:
                ends = [view.messages[0], view.messages[-1]]  # the local one does not fit
                summary_view = local or View(label, ends, (), (), 0)
                return Answered(view, attempt.done, [], attempt, provisional, summary_view)
        if local is None:
            raise error or TurnError(f"the {label} view does not fit the local context")
        if uses_tools:
            acted = self._act(local, binding, request.session_id, events, seed)
            done, calls = acted.completion, acted.tool_calls
            if acted.rewritten:  # what streamed is not what the record backs: say so
                events.notice(Notice("rewritten", REWRITTEN + acted.rewritten, acted.rewritten))
        else:
            s = self.profile.sampling_for(label)
            done = answer(
                self.engine,
                local.tokens,
                adapter=binding.adapter,
                slot=_slot(request.session_id, label),
                max_tokens=room(self.engine, len(local.tokens), s.max_tokens),
                sampling=sampling(s, seed),
                on_text=events.on_text,
                cancel=events.cancel,
                grammar=self._ui_grammar(label, events),
                ban_first=self._label_heads(),
            )
            calls = []
        return Answered(local, done, calls, attempt, provisional, local)

    def _remember(self, db: sqlite_utils.Database, record: TurnRecord, events: TurnEvents) -> None:
        """Keep the committed turn in the opt-in experience log; the turn stands either way."""
        from macaron_local.experience import record_turn

        try:
            record_turn(db, self.profile, record, record.tool_calls)
        except MacaronError as exc:
            log.warning("experience log: %s", exc)
            why = f"the turn is saved; the experience log could not keep it: {exc}"
            events.notice(Notice("experience", why))

    def _decide(
        self, request: TurnRequest, db: sqlite_utils.Database, previous: TurnRecord | None
    ) -> RouteResult:
        if request.tool_result_of is not None:
            return RouteResult(get_turn(db, request.tool_result_of).label, "sticky")
        if (label := request.label) is not None:
            if label not in self.bindings:
                raise TurnError(
                    f"unknown label {label!r}; this profile has {', '.join(self.profile.labels)}"
                )
            return RouteResult(label, "manual")
        return self.route(request.text, previous)

    def _view(
        self,
        label: str,
        history: list[TurnRecord],
        text: str,
        n_ctx: int | None = None,
        provisional: set[str] | None = None,
        clock: TurnClock | None = None,
    ) -> View:
        began = time.perf_counter()
        texts = {k: v.text for k, v in summaries(self.db(), [t.id for t in history]).items()}
        wait = self.profile.memory.summary_wait_s  # for this whole view, not per summary
        deadline = None if wait is None else began + wait
        waited = 0.0

        def summary_of(turn: TurnRecord) -> str:
            nonlocal waited
            if turn.id not in texts:
                left = None if deadline is None else max(0.0, deadline - time.perf_counter())
                t0 = time.perf_counter()
                text = self.summary_for(turn, timeout=left)
                waited += time.perf_counter() - t0
                if text is None:  # still being written past the wait: a stand-in
                    if provisional is not None:
                        provisional.add(turn.id)
                    text = provisional_summary(turn)
                texts[turn.id] = text  # the compaction loop asks again: same answer, no wait
            return texts[turn.id]

        try:
            return build_view(
                self.profile,
                label,
                history,
                text,
                summary_of=summary_of,
                chat_tokens=self.engine.chat_tokens,
                n_ctx=n_ctx or self.engine.n_ctx,
                tools=self.tools,
            )
        finally:
            if clock is not None:  # a remote view after the local one: both are waited for
                clock.view_s += time.perf_counter() - began
                clock.summary_wait_s += waited

    def _seed(self, label: str, seed: int | None) -> int:
        """A turn's sampling seed: the caller's (a retry's fresh one), else the profile's."""
        if seed is not None:
            return seed
        configured = self.profile.sampling_for(label).seed
        return configured if configured is not None else Sampling().seed

    def _label_heads(self) -> tuple[int, ...]:
        """The first token of every route label: an answer never starts with one. L0 routes and
        chats with one adapter, and on some requests it answered a chat turn with a bare label
        ("L3"); the router's labels are never a useful answer, so the answer cannot begin so."""
        if self._heads is None:
            self._heads = tuple(
                sorted({self.engine.tokenize(lb)[0] for lb in self.profile.router.labels})
            )
        return self._heads

    def _ui_grammar(self, label: str, events: TurnEvents) -> str | None:
        """The GenUI label decodes under the catalogue's grammar (its output always parses);
        one that cannot be built leaves the answer unconstrained, and the notice says so."""
        if label != genui_label(self.profile):
            return None
        tools = action_tools(self.profile, self.registry)
        try:
            return self.ui_grammars.get(self.ui_catalogue, tools, check=self.engine.check_grammar)
        except GrammarError as exc:
            log.warning("ui grammar: %s", exc)
            events.notice(
                Notice(
                    "grammar",
                    f"the {label} answer is not constrained to the "
                    f"component catalogue (its grammar could not be built: {exc})",
                    reason=str(exc),
                )
            )
            return None

    def _act(
        self,
        view: View,
        binding: adapter_bindings.Binding,
        session_id: str,
        events: TurnEvents,
        seed: int,
    ) -> ActOutcome:
        """A label with tools: the agent loop over this session's REPL; its tool calls are
        committed with the turn. ``events.confirm`` answers for this turn's side effects."""
        s = self.profile.sampling_for(view.label)
        agent = self.agent(session_id, view.label)
        key = f"{session_id}:{view.label}"
        messages = list(view.messages)
        if key in self._agents_idled:  # its namespace was lost
            self._agents_idled.discard(key)
            messages.insert(1, {"role": "system", "content": IDLE_NOTE})
        if events.confirm is not None:  # one turn per agent at a time: its answerer, for now
            self._turn_confirm[key] = events.confirm
        try:
            return act(
                self.engine,
                agent,
                messages,
                label=view.label,
                adapter=binding.adapter,
                slot=_slot(session_id, view.label),
                max_tokens=s.max_tokens or 512,
                sampling=sampling(s, seed),
                on_text=events.on_text,
                cancel=events.cancel,
            )
        finally:
            self._turn_confirm.pop(key, None)

    def agent(self, session_id: str, label: str | None = None) -> AgentSession:
        """This session's agent. Its REPL namespace lives until the runtime closes, or until it
        was idle for ``IDLE_REPL_S`` while other sessions were used (each REPL is a process):
        then a new one starts and the next agent turn is told what was lost."""
        label = label or agent_label(self.profile)
        key = f"{session_id}:{label}"
        with self._agents_lock:
            now = time.monotonic()
            for other, used in list(self._agents_used.items()):
                if other != key and now - used > IDLE_REPL_S:
                    self._agents.pop(other).close()
                    del self._agents_used[other]
                    self._agents_idled.add(other)
            if key not in self._agents:
                self._agents[key] = AgentSession(
                    self.profile,
                    self.registry,
                    label=label,
                    confirm=lambda tool, args: self._confirm(key, tool, args),
                )
            self._agents_used[key] = now
            return self._agents[key]

    def _confirm(self, key: str, tool: str, args: dict[str, Any]) -> bool:
        """Ask the running turn's answerer (``TurnEvents.confirm``: a server request's), else
        whoever drives the runtime now (``self.confirm``, set by the UI or CLI, may change after
        an agent was created); with nobody to ask, a side-effecting call is declined."""
        ask = self._turn_confirm.get(key) or self.confirm
        return bool(ask(tool, args)) if ask is not None else False

    def _new_turn(
        self,
        request: TurnRequest,
        decision: RouteResult,
        binding: adapter_bindings.Binding,
        answered: Answered,
        clock: TurnClock,
        seed: int,
    ) -> NewTurn:
        done, attempt, view = answered.done, answered.attempt, answered.view
        meta: dict[str, object] = {"route_error": decision.error} if decision.error else {}
        if attempt.done is None:  # answered here: the sampling seed it drew from
            meta["seed"] = seed
        if answered.provisional:
            meta["provisional_summaries"] = sorted(answered.provisional)
        if attempt.backend == "local":
            meta["engine"] = self.engine.settings()
        return NewTurn(
            request=request.text,
            answer=visible(done.text),
            label=decision.label,
            route_kind=decision.kind,
            route_probs=decision.probs,
            adapter_revision=binding.revision,
            profile_hash=self.profile.content_hash,
            backend=attempt.backend,
            failover_reason=attempt.failover,
            timings={
                "route_ms": decision.ms,
                **clock.timings(),
                "answer_ms": round(done.total_s * 1000, 2),
            },
            tokens={
                "prompt": done.n_prompt,
                "cached": done.n_reused,
                "completion": done.n_generated,
                "route": decision.n_tokens,
            },
            compacted=view.compacted > 0,
            tool_result_of=request.tool_result_of,
            meta={
                **meta,
                **attempt.meta(),
                "compacted_turns": view.compacted,
                "finish": done.finish_reason,
            },
        )

    def close(self, *, finish_summaries: bool = True) -> None:
        """Free everything; first write pending summaries for up to ``close_wait_s`` unless
        ``finish_summaries`` is False (the app quitting). What is not written is left for the
        next start."""
        if self._live is not None:
            self._live.stop()
            self._live = None
        try:
            if finish_summaries:
                self.finish_pending(timeout=self.profile.memory.close_wait_s)
        finally:
            if not finish_summaries:  # the summary being written stops at its next step (a
                self.engine.close()  # prompt chunk or a token) instead of being waited for
            self._summarizer.shutdown(wait=True)
            for agent in self._agents.values():
                agent.close()
            self.remote.close()
            self.engine.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


REWRITTEN = "the streamed answer was replaced by one the record backs: "


def _slot(session_id: str, label: str) -> str:
    return f"view:{session_id}:{label}"


@dataclass
class TurnClock:
    """One turn's timings, all from ``started``: the moment the runtime received the request
    (the user's send). ``first_text`` is when the first answer text went to the caller, so the
    recorded first-token time holds routing, the view and its summary waits, and any queueing."""

    started: float
    first_text: float | None = None
    view_s: float = 0.0  # building the view(s), summary waits included
    summary_wait_s: float = 0.0  # of which waiting for other turns' summaries
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def stamping(self, on_text: OnText | None) -> OnText:
        """``on_text`` that first notes when the first non-empty text piece arrives."""

        def stamped(piece: str) -> None:
            if piece and self.first_text is None:
                with self._lock:
                    self.first_text = self.first_text or time.perf_counter()
            if on_text is not None:
                on_text(piece)

        return stamped

    def timings(self) -> dict[str, float]:
        """Milliseconds since the send: first text (the end, if none came) and the commit."""
        now = time.perf_counter()
        first = self.first_text or now
        return {
            "view_ms": _ms(self.view_s),
            "summary_wait_ms": _ms(self.summary_wait_s),
            "ttft_ms": _ms(first - self.started),
            "total_ms": _ms(now - self.started),
        }


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


@dataclass(frozen=True)
class Answered:
    """What the answer step produced: the view it answered from, the completion (local or
    remote), the tool calls, the remote attempt, the summaries it stood in for, and the view
    the local summary reads."""

    view: View
    done: Completion | RemoteCompletion
    calls: list[NewToolCall]
    attempt: Attempt
    provisional: set[str]
    for_summary: View


def engine_config(res: Resources, n_labels: int = 4) -> EngineConfig:
    """The engine's settings from a profile's ``[resources]`` (unset fields: the defaults)."""
    base = EngineConfig()
    return EngineConfig(
        n_ctx=res.n_ctx,
        n_threads=res.threads,
        n_gpu_layers=res.n_gpu_layers,
        offload_kqv=res.offload,
        kv_type=res.kv_type or base.kv_type,
        flash_attn=res.flash_attn,
        n_batch=res.n_batch or base.n_batch,
        n_ubatch=res.n_ubatch,
        snapshot_mb=snapshot_mb(res),
        resident_slots=resident_slots(res, n_labels),
    )


def snapshot_mb(res: Resources, available: int | None = None) -> int:
    """Host memory (MiB) for parked slots' snapshots and checkpoints: the profile's
    ``snapshot_mb``, else an eighth of the host memory available at start, between 256 MiB
    and 4 GiB (snapshots take only what parked slots hold, so the cap is a ceiling, not an
    allocation; a 32k view of a large base is gigabytes, a 2k view of the 135M default 23 MiB)."""
    if res.snapshot_mb is not None:
        return res.snapshot_mb
    if available is None:
        from macaron_local.hostinfo import host_memory_available

        available = host_memory_available()
    if available is None:
        return EngineConfig().snapshot_mb
    return max(256, min(4096, (available >> 20) // 8))


def resident_slots(res: Resources, n_labels: int) -> int:
    """How many KV sequences stay resident: the profile's ``resident_slots``, else one on a
    CPU (parking a slot copies its used cells in host memory in a few ms, and the snapshots
    hold only used cells where a seat holds ``n_ctx``: bench/placement.py) and, when the KV
    lives on a GPU (layers and ``offload``), a seat per live slot of a conversation: the
    router, and each label's view and summary, so no switch copies KV across the bus."""
    if res.resident_slots is not None:
        return res.resident_slots
    on_device = res.offload and res.n_gpu_layers != 0
    return 1 + 2 * n_labels if on_device else 1
