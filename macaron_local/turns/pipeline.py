"""The runtime: one profile, one engine, one store, and the turn that runs through them.

A turn reads as one straight line: checkpoint (the session head) -> route (L0, unless pinned or
sticky) -> the chosen adapter answers from its own view, streaming -> one store transaction
commits the turn -> the summary hop runs in the background and is saved on its own. Nothing is
written before the commit, so an error, a cancel or a killed process leaves the session exactly
as it was before the turn.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import sqlite_utils

from macaron_local import paths
from macaron_local.agent.session import AgentSession, repl_warnings
from macaron_local.engine import Engine, EngineConfig, Sampling
from macaron_local.errors import CancelledError, GrammarError, MacaronError, TurnError
from macaron_local.genui.catalogue import default_catalogue
from macaron_local.genui.serving import GrammarCache, action_tools, genui_label
from macaron_local.hcp import Profile, check_approved, load_profile
from macaron_local.manifests import get_manifest, verified_path
from macaron_local.remote.hybrid import Attempt, Notice, OnNotice, RemoteHook
from macaron_local.store import (
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
from macaron_local.turns.act import act, forward_cancel
from macaron_local.turns.live import LiveReload, OnEvent
from macaron_local.turns.result import TurnResult
from macaron_local.turns.route import ROUTE_SLOT, RouteResult, route, route_messages
from macaron_local.turns.summaries import SummaryHops
from macaron_local.turns.summary import provisional_summary
from macaron_local.turns.tools import load_plugins, tool_descriptions
from macaron_local.turns.views import View, build_view

log = logging.getLogger(__name__)

DEFAULT_PROFILE = "tall-local"
IDLE_REPL_S = 900.0  # an agent's REPL unused this long is closed (memory), its loss said
IDLE_NOTE = (
    "Note: this conversation's Python REPL was restarted after being idle; variables and "
    "imports from earlier turns are gone (the tools and your files are still there)."
)
HEAD = "head"  # run_turn(parent_id=HEAD): continue from the session's current head


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
        self.confirm: Callable[[str, dict], bool] | None = None  # set by the UI / CLI
        self._heads: tuple[int, ...] | None = None  # first tokens of the route labels
        self.remote = RemoteHook(profile)  # heavy turns to a remote server, failover to local
        self._agents: dict[str, AgentSession] = {}
        self._agents_used: dict[str, float] = {}  # key -> monotonic time of the last use
        self._agents_idled: set[str] = set()  # closed for idleness: the next turn is told
        self._agents_lock = threading.Lock()
        self._local = threading.local()
        self._init_summaries()
        self.ui_catalogue = default_catalogue()  # what the GenUI label draws with
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
            res = prof.resources
            engine = Engine(
                verified_path(prof.base.model),
                EngineConfig(n_ctx=res.n_ctx, n_threads=res.threads, n_gpu_layers=res.n_gpu_layers),
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
        adapter = self.bindings["L0"].adapter if "L0" in self.bindings else None
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

    def route(self, text: str) -> RouteResult:
        return route(
            self.engine,
            self.profile,
            text,
            adapter=self.bindings["L0"].adapter if "L0" in self.bindings else None,
            tools=self.tools,
        )

    def run_turn(
        self,
        session_id: str,
        text: str,
        *,
        label: str | None = None,
        parent_id: str | None = HEAD,
        tool_result_of: str | None = None,
        on_route: Callable[[RouteResult], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        remote: bool = False,
        on_notice: OnNotice | None = None,
        seed: int | None = None,
    ) -> TurnResult:
        """Run one turn; returns its committed record. Raises :class:`TurnError` (rolled back).

        A heavy turn (or ``remote=True``, the user's ``/remote``) is answered by the remote
        server; if that fails, ``on_notice`` says why and the answer reruns locally. ``seed``
        (a retry draws a fresh one) wins over the profile's; the turn records the one used.
        """
        started = time.perf_counter()
        if (problem := unicode_problem(text)) is not None:  # undecodable argv, a JSON escape
            raise TurnError(f"the request is not valid Unicode text ({problem}); nothing was saved")
        db = self.db()
        head = get_session(db, session_id).head_turn_id  # the checkpoint
        parent = head if parent_id == HEAD else parent_id  # retry/edit: branch from parent_id
        history = branch(db, session_id, parent) if parent else []
        decision = self._decide(text, label, tool_result_of, db)
        if on_route:
            on_route(decision)
        binding = self.bindings[decision.label]
        seed = self._seed(decision.label, seed)
        calls: list = []
        provisional: set[str] = set()  # turns whose summary the view had to stand in for
        try:  # the view may not fit (ContextOverflowError): that too is a rolled-back TurnError
            plan = self.remote.plan(
                decision.label,
                text,
                lambda n_ctx: self._view(decision.label, history, text, n_ctx, provisional),
                forced=remote,
                adapter_loaded=binding.adapter is not None,
                uses_tools=bool(self.profile.tool_patterns(decision.label)),
            )
            attempt = self.remote.answer(
                plan, session_id, on_text=on_text, on_notice=on_notice, cancel=cancel
            )
            view = plan.local_view() if attempt.done is None else plan.remote
            if attempt.done is not None:
                done = attempt.done
            elif self.profile.tool_patterns(decision.label):
                acted = self._act(view, binding, session_id, on_text, cancel, seed)
                done, calls = acted.completion, acted.tool_calls
            else:
                grammar = self._ui_grammar(decision.label, on_notice)
                done = self._answer(view, binding, session_id, on_text, cancel, grammar, seed)
        except CancelledError as exc:
            raise TurnError("the turn was cancelled; the session is as it was before it") from exc
        except MacaronError as exc:
            raise TurnError(
                f"the {decision.label} answer failed: {exc}; nothing was saved"
            ) from exc
        if not done.text.strip() and not calls:
            raise TurnError(f"the {decision.label} answer was empty; nothing was saved")
        record = commit_turn(
            db,
            session_id,
            self._new_turn(
                text,
                decision,
                binding,
                view,
                done,
                started,
                tool_result_of,
                attempt,
                provisional,
                seed=seed,
            ),
            calls,
            expected_head=head,
            parent_id=parent,
        )
        self._remember(db, record, calls, on_notice)
        # the summary stays local; a remote turn is first fitted to the local context
        summarized, view = self.remote.for_summary(record, view, attempt, plan, self.engine)
        self._summarize_later(summarized, view, binding)
        return TurnResult.of(record)

    def _remember(
        self, db: sqlite_utils.Database, record: TurnRecord, calls: list, on_notice: OnNotice | None
    ) -> None:
        """Keep the committed turn in the opt-in experience log; the turn stands either way."""
        from macaron_local.experience import record_turn

        try:
            record_turn(db, self.profile, record, calls)
        except MacaronError as exc:
            log.warning("experience log: %s", exc)
            if on_notice is not None:
                on_notice(
                    Notice(
                        "experience",
                        f"the turn is saved; the experience log could not keep it: {exc}",
                    )
                )

    def _decide(
        self, text: str, label: str | None, tool_result_of: str | None, db: sqlite_utils.Database
    ) -> RouteResult:
        if tool_result_of is not None:
            return RouteResult(get_turn(db, tool_result_of).label, "sticky")
        if label is not None:
            if label not in self.bindings:
                raise TurnError(
                    f"unknown label {label!r}; this profile has {', '.join(self.profile.labels)}"
                )
            return RouteResult(label, "manual")
        return self.route(text)

    def _view(
        self,
        label: str,
        history: list[TurnRecord],
        text: str,
        n_ctx: int | None = None,
        provisional: set[str] | None = None,
    ) -> View:
        texts = {k: v.text for k, v in summaries(self.db(), [t.id for t in history]).items()}
        wait = self.profile.memory.summary_wait_s  # for this whole view, not per summary
        deadline = None if wait is None else time.perf_counter() + wait

        def summary_of(turn: TurnRecord) -> str:
            if turn.id not in texts:
                left = None if deadline is None else max(0.0, deadline - time.perf_counter())
                text = self.summary_for(turn, timeout=left)
                if text is None:  # still being written past the wait: a stand-in
                    if provisional is not None:
                        provisional.add(turn.id)
                    text = provisional_summary(turn)
                texts[turn.id] = text  # the compaction loop asks again: same answer, no wait
            return texts[turn.id]

        return build_view(
            self.profile,
            label,
            history,
            text,
            summary_of=summary_of,
            count_tokens=self.engine.count_tokens,
            render=self.engine.render_chat,
            n_ctx=n_ctx or self.engine.n_ctx,
            tools=self.tools,
        )

    def _answer(
        self,
        view: View,
        binding: adapter_bindings.Binding,
        session_id: str,
        on_text: Callable[[str], None] | None,
        cancel: threading.Event | None,
        grammar: str | None = None,
        seed: int | None = None,
    ):  # noqa: ANN202
        s = self.profile.sampling_for(view.label)
        prompt = self.engine.render_chat(view.messages)
        budget = min(s.max_tokens or 512, self.engine.n_ctx - self.engine.count_tokens(prompt))
        stream = self.engine.generate(
            prompt,
            adapter=binding.adapter,
            slot=_slot(session_id, view.label),
            max_tokens=budget,
            sampling=_sampling(s, seed),
            grammar=grammar,
            ban_first=self._label_heads(),
        )
        watcher = forward_cancel(cancel, stream)
        try:
            for piece in stream:
                if on_text:
                    on_text(piece)
            return stream.result()
        finally:
            watcher.set()

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

    def _ui_grammar(self, label: str, on_notice: OnNotice | None) -> str | None:
        """The GenUI label decodes under the catalogue's grammar (its output always parses);
        one that cannot be built leaves the answer unconstrained, and the notice says so."""
        if label != genui_label(self.profile):
            return None
        tools = action_tools(self.profile, self.registry)
        try:
            return self.ui_grammars.get(self.ui_catalogue, tools, check=self.engine.check_grammar)
        except GrammarError as exc:
            log.warning("ui grammar: %s", exc)
            if on_notice is not None:
                on_notice(
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
        on_text: Callable[[str], None] | None,
        cancel: threading.Event | None,
        seed: int | None = None,
    ):  # noqa: ANN202
        """L1: the agent loop over this session's REPL; tool calls are committed with the turn."""
        s = self.profile.sampling_for(view.label)
        agent = self.agent(session_id, view.label)
        messages = list(view.messages)
        if f"{session_id}:{view.label}" in self._agents_idled:  # its namespace was lost
            self._agents_idled.discard(f"{session_id}:{view.label}")
            messages.insert(1, {"role": "system", "content": IDLE_NOTE})
        return act(
            self.engine,
            agent,
            messages,
            label=view.label,
            adapter=binding.adapter,
            slot=_slot(session_id, view.label),
            max_tokens=s.max_tokens or 512,
            sampling=_sampling(s, seed),
            on_text=on_text,
            cancel=cancel,
        )

    def agent(self, session_id: str, label: str = "L1") -> AgentSession:
        """This session's agent. Its REPL namespace lives until the runtime closes, or until it
        was idle for ``IDLE_REPL_S`` while other sessions were used (each REPL is a process):
        then a new one starts and the next agent turn is told what was lost."""
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
                    self.profile, self.registry, label=label, confirm=self._confirm
                )
            self._agents_used[key] = now
            return self._agents[key]

    def _confirm(self, tool: str, args: dict) -> bool:
        """Ask whoever drives the runtime now (``self.confirm``, set by the UI or CLI, may change
        after an agent was created); with nobody to ask, a side-effecting call is declined."""
        ask = self.confirm
        return bool(ask(tool, args)) if ask is not None else False

    def _new_turn(
        self,
        text: str,
        decision: RouteResult,
        binding: adapter_bindings.Binding,
        view: View,
        done,
        started: float,
        tool_result_of: str | None,
        attempt: Attempt,
        provisional: set[str],
        *,
        seed: int,
    ) -> NewTurn:  # noqa: ANN001
        total = (time.perf_counter() - started) * 1000
        meta: dict = {"route_error": decision.error} if decision.error else {}
        if attempt.done is None:  # answered here: the sampling seed it drew from
            meta["seed"] = seed
        if provisional:
            meta["provisional_summaries"] = sorted(provisional)
        return NewTurn(
            request=text,
            answer=done.text.strip(),
            label=decision.label,
            route_kind=decision.kind,
            route_probs=decision.probs,
            adapter_revision=binding.revision,
            profile_hash=self.profile.content_hash,
            backend=attempt.backend,
            failover_reason=attempt.failover,
            timings={
                "route_ms": decision.ms,
                "ttft_ms": round(decision.ms + done.ttft_s * 1000, 2),
                "answer_ms": round(done.total_s * 1000, 2),
                "total_ms": round(total, 2),
            },
            tokens={
                "prompt": done.n_prompt,
                "cached": done.n_reused,
                "completion": done.n_generated,
                "route": decision.n_tokens,
            },
            compacted=view.compacted > 0,
            tool_result_of=tool_result_of,
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


def _slot(session_id: str, label: str) -> str:
    return f"view:{session_id}:{label}"


def _sampling(s, seed: int | None = None) -> Sampling:  # noqa: ANN001 - hcp SamplingParams
    """The engine's sampling from the profile's (optional fields); ``seed`` wins when given."""
    base = Sampling()
    return Sampling(
        temperature=s.temperature if s.temperature is not None else base.temperature,
        top_k=s.top_k if s.top_k is not None else base.top_k,
        top_p=s.top_p if s.top_p is not None else base.top_p,
        min_p=s.min_p if s.min_p is not None else base.min_p,
        repeat_penalty=s.repeat_penalty if s.repeat_penalty is not None else base.repeat_penalty,
        seed=seed if seed is not None else s.seed if s.seed is not None else base.seed,
    )
