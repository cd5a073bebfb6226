"""The ASGI app of ``macaron serve``: an OpenAI-compatible API over the whole turn pipeline.

Owns the routes (``/health``, ``/v1/models``, ``/v1/chat/completions``), bearer-token checks,
admission (429 + Retry-After when the queue is full), loading the runtime in the background
(``/health`` answers 503 until it is ready), running each turn on a worker thread and cancelling
it when the client goes away. Built by :func:`make_app` from settings and a runtime opener:
nothing is opened at import. Must not: implement turns (``jobs``), choose one (``dispatch``)
or the wire format (``protocol``).
"""

from __future__ import annotations

import asyncio
import hmac
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from macaron_local.errors import ContextOverflowError, GrammarError, MacaronError, TurnError
from macaron_local.remote.hybrid import Notice
from macaron_local.serve import protocol as wire
from macaron_local.serve.admission import Admission, QueueFull
from macaron_local.serve.approvals import APPROVE_HEADER
from macaron_local.serve.conversations import (
    Conversations,
    conversations_path,
    valid_conversation_id,
)
from macaron_local.serve.dispatch import CONVERSATION_HEADER, job_for
from macaron_local.serve.jobs import Emit, Outcome
from macaron_local.serve.settings import ServeSettings
from macaron_local.turns.pipeline import Runtime

# sent before the answer of a streamed turn whose tool steps streamed first
STEPS = Notice("steps", "the agent's steps streamed above are in tool_steps; the answer follows")


@dataclass
class ServerState:
    settings: ServeSettings
    admission: Admission
    runtime: Runtime | None = None
    conversations: Conversations | None = None
    error: BaseException | None = None
    pool: ThreadPoolExecutor | None = None
    started: float = field(default_factory=time.time)


class Job:
    """One turn on a worker thread; its events arrive on the event loop's queue."""

    def __init__(self, pool: ThreadPoolExecutor, run: Callable[[Emit, threading.Event], Outcome]):
        self.loop = asyncio.get_running_loop()
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.cancel = threading.Event()
        self.future = self.loop.run_in_executor(pool, self._run, run)

    def _emit(self, kind: str, data: Any) -> None:
        self.loop.call_soon_threadsafe(self.events.put_nowait, (kind, data))

    def _run(self, run: Callable[[Emit, threading.Event], Outcome]) -> None:
        try:
            self._emit("done", run(self._emit, self.cancel))
        except BaseException as exc:  # noqa: BLE001 - delivered to the request as an event
            self._emit("error", exc)

    async def stream(self) -> AsyncIterator[tuple[str, Any]]:
        while True:
            kind, data = await self.events.get()
            yield kind, data
            if kind in ("done", "error"):
                return


def make_app(
    settings: ServeSettings,
    open_runtime: Callable[[], Runtime],
    *,
    on_load_error: Callable[[BaseException], None] | None = None,
) -> Starlette:
    """The app; the runtime is opened by ``open_runtime`` on a thread once the server starts."""
    state = ServerState(settings, Admission(settings.concurrency, settings.queue))

    def load() -> None:
        try:
            state.conversations = Conversations(conversations_path())
            state.runtime = open_runtime()
        except BaseException as exc:  # noqa: BLE001 - reported by /health and the CLI
            state.error = exc
            if on_load_error:
                on_load_error(exc)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.pool = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="serve-turn")
        loader = threading.Thread(target=load, name="serve-load", daemon=True)
        loader.start()
        try:
            yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, _shutdown, state, loader)

    routes = [
        Route("/health", partial(health, state), methods=["GET"]),
        Route("/v1/models", partial(models, state), methods=["GET"]),
        Route("/v1/chat/completions", partial(chat, state), methods=["POST"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.serve = state
    return app


def _shutdown(state: ServerState, loader: threading.Thread) -> None:
    loader.join()
    if state.pool is not None:
        state.pool.shutdown(wait=True)
    if state.runtime is not None:
        state.runtime.close()  # waits for the summaries still running
    if state.conversations is not None:
        state.conversations.close()


# --- routes ----------------------------------------------------------------------------------


async def health(state: ServerState, request: Request) -> Response:
    stats = asdict(state.admission.stats())
    if state.runtime is None:
        status = "error" if state.error is not None else "loading"
        body: dict[str, Any] = {"status": status, "admission": stats}
        if state.error is not None:
            body["error"] = str(state.error)
        return JSONResponse(body, status_code=503, headers=_retry(state))
    rt = state.runtime
    return JSONResponse(
        {
            "status": "ok",
            "profile": rt.profile.id,
            "profile_hash": rt.profile.content_hash,
            "base": rt.profile.base.model,
            "adapters": {label: b.revision for label, b in rt.bindings.items()},
            "tools": sorted(rt.tools),
            "reload_error": rt.reload_error,  # a broken profile edit; the old profile serves
            "admission": stats,
            "limits": {"concurrency": state.admission.concurrency, "queue": state.admission.queue},
        }
    )


async def models(state: ServerState, request: Request) -> Response:
    if (denied := _check(state, request)) is not None:
        return denied
    rt = state.runtime
    assert rt is not None
    created = int(state.started)
    data = [
        {"id": mid, "object": "model", "created": created, "owned_by": "macaron-local"}
        for mid in wire.model_ids(rt.profile.id, rt.profile.labels)
    ]
    return JSONResponse({"object": "list", "data": data})


async def chat(state: ServerState, request: Request) -> Response:
    if (denied := _check(state, request)) is not None:
        return denied
    rt = state.runtime
    assert rt is not None and state.pool is not None and state.conversations is not None
    try:
        req = wire.parse_request(await _body(request, state.settings.max_body_bytes))
        conversation = request.headers.get(CONVERSATION_HEADER)
        if conversation is not None and not valid_conversation_id(conversation):
            raise wire.BadRequest(
                f"{CONVERSATION_HEADER} must be 1-200 characters of letters, digits and ._:@/+=-"
            )
        label = wire.pinned_label(req.model, rt.profile.labels)
        approve = request.headers.get(APPROVE_HEADER)
        run = job_for(rt, state.conversations, req, conversation, label, approve)
    except TooLarge as exc:
        return _error(413, str(exc), "invalid_request_error", code="body_too_large")
    except wire.BadRequest as exc:
        return _error(400, str(exc), "invalid_request_error", param=exc.param)
    try:
        await state.admission.acquire()
    except QueueFull:
        return _error(
            429,
            f"the server is busy ({state.admission.concurrency} turns running, "
            f"{state.admission.queue} waiting); retry later",
            "rate_limit_error",
            code="queue_full",
            headers=_retry(state),
        )
    try:
        job = Job(state.pool, lambda emit, cancel: run(emit=emit, cancel=cancel))
    except BaseException:
        state.admission.release()
        raise
    job.future.add_done_callback(lambda _: state.admission.release())
    model = req.model or rt.profile.id
    extra = {"conversation": conversation} if conversation else {}
    if req.stream:
        return _CancellingStream(
            _sse(job, model, req.include_usage, extra), job, media_type="text/event-stream"
        )
    return await _complete(job, request, model, extra)


# --- one request -----------------------------------------------------------------------------


async def _complete(job: Job, request: Request, model: str, extra: dict[str, Any]) -> Response:
    """Wait for the turn (cancelling it if the client leaves), then answer with the usage."""
    waiter = asyncio.ensure_future(_last_event(job))
    while not waiter.done():
        await asyncio.wait({waiter}, timeout=0.25)
        if not waiter.done() and await request.is_disconnected():
            job.cancel.set()
    kind, data = waiter.result()
    if kind == "error":
        return _turn_error(data)
    # the summary is still being written: the reply does not wait for it (summary_pending)
    usage = data.tally.usage(wait_summary=False)
    return JSONResponse(wire.completion_body(wire.new_id(), model, data, usage, **extra))


async def _last_event(job: Job) -> tuple[str, Any]:
    last: tuple[str, Any] = ("error", RuntimeError("the turn ended without a result"))
    async for event in job.stream():
        last = event
    return last


async def _sse(
    job: Job, model: str, include_usage: bool, extra: dict[str, Any]
) -> AsyncIterator[str]:
    cid = wire.new_id()
    streamed, rewritten = "", None  # content sent; a "rewritten" notice held back
    try:
        async for kind, data in job.stream():
            if kind == "route":  # the first chunk: role + the route in the extension field
                ext = wire.extension(data, **extra)
                yield wire.chunk(cid, model, {"role": "assistant", "content": ""}, ext=ext)
            elif kind == "text":
                streamed += data
                yield wire.chunk(cid, model, {"content": data})
            elif kind == "notice" and data.kind == "rewritten":
                rewritten = data  # sent with the answer the record backs, once it is known
            elif kind == "notice":  # a failover: the client drops the text streamed so far
                streamed = "" if data.discarded_chars else streamed
                yield wire.chunk(cid, model, {}, ext=wire.notice_ext(data))
            elif kind == "error":
                status, body = _error_parts(data)
                yield wire.sse(body)
            else:
                if not data.tool_calls and streamed.strip() != data.text.strip():
                    # an agent's steps (or a claim the record contradicts) streamed: the client
                    # drops them and shows the turn's answer; the steps are in tool_steps
                    void = replace(rewritten or STEPS, discarded_chars=len(streamed))
                    yield wire.chunk(cid, model, {}, ext=wire.notice_ext(void))
                    yield wire.chunk(cid, model, {"content": data.text})
                if data.tool_calls:  # the whole call in one delta, once it is known valid
                    delta = {"tool_calls": wire.tool_calls(data.tool_calls, indexed=True)}
                    yield wire.chunk(cid, model, delta)
                yield wire.chunk(
                    cid,
                    model,
                    {},
                    finish_reason=data.finish_reason,
                    ext=wire.extension(data.route, data, **extra),
                )
                if include_usage:
                    loop = asyncio.get_running_loop()
                    usage = await loop.run_in_executor(None, data.tally.usage)
                    yield wire.chunk(cid, model, None, usage=usage)
        yield wire.DONE
    finally:
        job.cancel.set()  # a no-op once the turn is done; stops it when the client went away


class _CancellingStream(StreamingResponse):
    """A streaming response that cancels its turn however the response ends."""

    def __init__(self, content: AsyncIterator[str], job: Job, media_type: str) -> None:
        super().__init__(content, media_type=media_type, headers={"Cache-Control": "no-cache"})
        self.job = job

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.job.cancel.set()


class TooLarge(Exception):  # noqa: N818 - a signal to the HTTP edge
    pass


async def _body(request: Request, limit: int) -> bytes:
    """The request body, refused (:class:`TooLarge`) as soon as it passes ``limit`` bytes: a
    declared length is checked before anything is read, a chunked body as it arrives."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the body has {declared} bytes; this server takes at most {limit}")
    parts, size = [], 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise TooLarge(f"the body passed {limit} bytes, the most this server takes")
        parts.append(part)
    return b"".join(parts)


# --- errors and auth -------------------------------------------------------------------------


def _check(state: ServerState, request: Request) -> Response | None:
    """401 without the right bearer token (when one is set); 503 until the runtime is ready."""
    token = state.settings.token
    if token is not None:
        got = request.headers.get("authorization", "")
        scheme, _, value = got.partition(" ")
        expected = token.get_secret_value().encode()
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), expected):
            return _error(
                401,
                "missing or wrong bearer token",
                "authentication_error",
                code="invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"},
            )
    if state.runtime is None:
        what = f"failed to load: {state.error}" if state.error else "is still loading"
        return _error(
            503, f"the model {what}", "server_error", code="not_ready", headers=_retry(state)
        )
    return None


def _retry(state: ServerState) -> dict[str, str]:
    return {"Retry-After": str(state.settings.retry_after_s)}


def _error(
    status: int,
    message: str,
    kind: str,
    *,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(wire.error_body(message, kind, code, param), status, headers=headers)


def _error_parts(exc: BaseException) -> tuple[int, dict[str, Any]]:
    cause = exc.__cause__ if isinstance(exc, TurnError) else None
    if isinstance(exc, ContextOverflowError) or isinstance(cause, ContextOverflowError):
        body = wire.error_body(_message(exc), "invalid_request_error", "context_length_exceeded")
        return 400, body
    if isinstance(exc, GrammarError):  # only a client's tool schema makes one here
        return 400, wire.error_body(_message(exc), "invalid_request_error", "invalid_tool_schema")
    if isinstance(exc, MacaronError):
        return 500, wire.error_body(_message(exc), "server_error", type(exc).__name__)
    return 500, wire.error_body(f"internal error: {type(exc).__name__}: {exc}", "server_error")


def _turn_error(exc: BaseException) -> JSONResponse:
    status, body = _error_parts(exc)
    return JSONResponse(body, status)


def _message(exc: BaseException) -> str:
    hint = getattr(exc, "hint", None)
    return f"{exc} (hint: {hint})" if hint else str(exc)
