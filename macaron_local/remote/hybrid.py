"""The remote backend of the answer step: whether a turn goes remote, and the remote answer.

Owns the plan of one turn (a pure decision: is it heavy, does the remote need a longer view
than the local one), the remote attempt (client, health gate, key, conversation id, model name
per label) and what happens when it fails: the user gets a :class:`Notice`, any partial remote
text is discarded, and the pipeline answers locally. The pipeline builds every view and calls
this only for the plan and, for a heavy turn, the remote answer. Route and summary stay local.
Must not: build views, commit anything, keep the API key anywhere but in memory, or let a
remote failure escape as an error (a failure is an :class:`Attempt` with a reason; only
cancel raises).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from macaron_local import secrets
from macaron_local.hcp import Profile
from macaron_local.hcp.schema import DEFAULT_URL_ENV
from macaron_local.remote.client import ChatRequest, RemoteClient, RemoteCompletion, RemoteFailure
from macaron_local.remote.health import Health
from macaron_local.remote.policy import Heavy, expected_answer_tokens, heavy_reason

REMOTE_CTX = 131_072  # the remote view is built for a large context: nothing gets compacted
MAX_REMOTE_TOKENS = 16_384


@dataclass(frozen=True)
class Notice:
    """Something the user must be told about this turn (the CLI prints it to stderr)."""

    kind: str  # failover | waiting | local | experience | grammar | rewritten | steps
    message: str
    reason: str | None = None
    discarded_chars: int = 0  # remote text already streamed, now thrown away

    def __str__(self) -> str:
        return self.message


OnNotice = Callable[[Notice], None]


@dataclass(frozen=True)
class Plan:
    """How a turn will be answered: ``heavy`` None means locally. ``long_view``: the local
    view was compacted or does not fit, so the remote gets one built for ``REMOTE_CTX``."""

    label: str
    fits_locally: bool
    heavy: Heavy | None = None
    long_view: bool = False
    notice: str | None = None

    @property
    def remote(self) -> bool:
        return self.heavy is not None


@dataclass(frozen=True)
class Attempt:
    """What the remote did for a turn: an answer, or the reason the turn runs locally."""

    done: RemoteCompletion | None = None
    heavy: Heavy | None = None
    failover: str | None = None  # reason code (see client.REASONS, plus no_endpoint/remote_down)
    detail: str | None = None

    @property
    def backend(self) -> str:
        return "remote" if self.done is not None else "local"

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.heavy is not None:
            out["heavy"] = self.heavy.code
        if self.done is not None:
            out["remote_model"] = self.done.model
        if self.failover is not None:
            out["failover_reason"] = self.failover
            out["failover_detail"] = self.detail
        return out


def conversation_id(session_id: str) -> str:
    """A stable id per session for ``X-Conversation-Id`` that does not reveal the local one."""
    return "mcl-" + hashlib.sha256(f"macaron-local:{session_id}".encode()).hexdigest()[:32]


class RemoteHook:
    """One per runtime. Thread-safe: the client and its health gate are shared by turns."""

    def __init__(
        self,
        profile: Profile,
        *,
        environ: Mapping[str, str] | None = None,
        api_key: str | SecretStr | None = None,
        models: Mapping[str, str] | None = None,
        retry_after_cap_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.profile = profile
        self.environ = environ
        self.api_key = api_key
        # plain vLLM/SGLang multi-LoRA servers name each adapter as a model
        self.models = dict(models or getattr(profile.remote, "models", None) or {})
        self.retry_after_cap_s = retry_after_cap_s
        self.clock = clock
        self._lock = threading.Lock()
        self._client: RemoteClient | None = None
        self._client_key: tuple[str, str, Any] | None = None
        self.health: Health | None = None

    # --- plan ---------------------------------------------------------------------------

    def plan(
        self,
        label: str,
        text: str,
        *,
        fits_locally: bool,
        compacted: bool,
        forced: bool = False,
        adapter_loaded: bool = True,
        uses_tools: bool = False,
    ) -> Plan:
        """Decide whether the turn is heavy (pure: nothing is built or sent).

        ``adapter_loaded`` False means the label is served by the base weights; that counts as
        "local model missing" when the profile asked for an adapter (revision not "none").
        """
        if not (self.profile.remote.enabled or forced) or uses_tools:
            note = "the agent's tool loop runs locally; this turn stays local" if forced else None
            return Plan(label, fits_locally, notice=note if uses_tools else None)
        too_long = not fits_locally or compacted
        heavy = heavy_reason(
            self.profile.remote.heavy,
            label=label,
            text=text,
            forced=forced,
            local_missing=not adapter_loaded and self.profile.adapters[label].revision != "none",
            view_too_long=too_long,
        )
        return Plan(label, fits_locally, heavy, long_view=heavy is not None and too_long)

    # --- answer -------------------------------------------------------------------------

    def answer_remote(
        self,
        plan: Plan,
        messages: list[dict[str, str]],
        session_id: str,
        *,
        on_text: Callable[[str], None] | None = None,
        on_notice: OnNotice | None = None,
        cancel: threading.Event | None = None,
    ) -> Attempt:
        """Answer a heavy turn remotely; an Attempt without ``done`` means: answer locally."""
        tell = on_notice or (lambda _n: None)
        assert plan.heavy is not None, "answer_remote is for heavy turns"
        endpoint = self.endpoint(forced=plan.heavy.code == "forced")
        if endpoint is None:
            why = f"no remote endpoint is set (profile [remote] endpoint or ${DEFAULT_URL_ENV})"
            return _local(plan, "no_endpoint", why, tell)
        client, health = self.connect(endpoint)
        ok, last = health.usable()
        if not ok:
            wait = health.state().retry_in_s
            why = f"the remote is down ({last}); next check in {wait:.0f} s"
            return _local(plan, "remote_down", why, tell)
        shown = 0

        def relay(piece: str) -> None:
            nonlocal shown
            shown += len(piece)
            if on_text:
                on_text(piece)

        def waiting(seconds: float) -> None:
            tell(
                Notice(
                    "waiting", f"the remote is busy; retrying in {seconds:.1f} s", "rate_limited"
                )
            )

        try:
            done = client.chat(
                self._request(plan, messages, session_id),
                on_text=relay,
                on_wait=waiting,
                cancel=cancel,
            )
        except RemoteFailure as exc:
            health.failed(exc.reason, exc.retry_after)
            return _local(plan, exc.reason, str(exc), tell, discarded=shown)
        health.succeeded()
        return Attempt(done=done, heavy=plan.heavy)

    def _request(self, plan: Plan, messages: list[dict[str, str]], session_id: str) -> ChatRequest:
        s = self.profile.sampling_for(plan.label)
        max_tokens = s.max_tokens or 512
        if plan.heavy is not None and plan.heavy.code == "long_answer":
            expected = expected_answer_tokens(messages[-1]["content"])
            max_tokens = min(MAX_REMOTE_TOKENS, max(max_tokens, int(expected * 1.25)))
        fields = {"temperature": s.temperature, "top_p": s.top_p, "top_k": s.top_k}
        fields |= {"min_p": s.min_p, "seed": s.seed}
        return ChatRequest(
            messages=messages,
            model=self.model_for(plan.label),
            max_tokens=max_tokens,
            sampling={k: v for k, v in fields.items() if v is not None},
            conversation_id=conversation_id(session_id),
        )

    def model_for(self, label: str) -> str:
        return self.models.get(label) or self.profile.remote.served_model

    # --- endpoint, key, client ----------------------------------------------------------

    def endpoint(self, *, forced: bool = False) -> str | None:
        """The endpoint this turn would use (``Remote.resolved_endpoint``: the one rule)."""
        env = os.environ if self.environ is None else self.environ
        return self.profile.remote.resolved_endpoint(env, forced=forced)

    def connect(self, endpoint: str) -> tuple[RemoteClient, Health]:
        """The client for ``endpoint`` with the key resolved now (a new key: a new client)."""
        found = secrets.resolve_api_key(self.api_key, environ=self.environ)
        key = found.value if found else None
        rem = self.profile.remote  # a reloaded profile with other limits: a new client
        ident = (endpoint, key.get_secret_value() if key else "", rem)
        with self._lock:
            if self._client is None or self._client_key != ident:
                same_endpoint = self._client_key is not None and self._client_key[0] == endpoint
                if self._client is not None:
                    self._client.close()
                self._client = RemoteClient(
                    endpoint,
                    api_key=key,
                    connect_timeout_s=rem.connect_timeout_s,
                    read_timeout_s=rem.read_timeout_s,
                    total_timeout_s=rem.total_timeout_s,
                    max_response_bytes=rem.max_response_bytes,
                    retry_after_cap_s=self.retry_after_cap_s,
                )
                self._client_key = ident
                if not (same_endpoint and self.health is not None):
                    self.health = Health(self.probe, clock=self.clock)
            assert self.health is not None
            return self._client, self.health

    def probe(self) -> str | None:
        """One health check of the current endpoint (None: healthy; else a reason code)."""
        client = self._client
        if client is None:
            return "no_endpoint"
        return client.probe(self.profile.remote.connect_timeout_s)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _local(plan: Plan, reason: str, detail: str, tell: OnNotice, *, discarded: int = 0) -> Attempt:
    """Fail over: tell the user, and answer locally (the partial remote text is not kept)."""
    dropped = f"; {discarded} characters of its partial answer were discarded" if discarded else ""
    where = "answering locally" if plan.fits_locally else "the local model cannot take it"
    tell(Notice("failover", f"remote failed: {detail}{dropped}; {where}", reason, discarded))
    return Attempt(heavy=plan.heavy, failover=reason, detail=detail)
