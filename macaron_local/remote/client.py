"""The HTTP client for an OpenAI-compatible remote (Venti, vLLM, SGLang, llama.cpp's server).

Owns one ``httpx.Client`` per endpoint: ``POST /v1/chat/completions`` streamed as SSE (or not),
the ``X-Conversation-Id`` header, the bearer key, TLS verification (always on), connect/read
timeouts, ``Retry-After`` on 429 up to a cap, and health probes (``/health``, then
``/v1/models``). Every way the remote can fail becomes one :class:`RemoteFailure` with a short
``reason`` code the caller records and fails over on.
Must not: decide which turns go remote, touch the engine or the store, or put the key in an
error message (errors carry the host, the status and a clipped body, never headers).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from macaron_local.engine.types import Completion
from macaron_local.errors import CancelledError, RemoteError

USER_AGENT = "macaron-local"
OnText = Callable[[str], None]


class RemoteFailure(RemoteError):
    """The remote could not give a whole answer. ``reason`` is one of :data:`REASONS`."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason
        self.retry_after = retry_after


REASONS = (
    "refused",  # nothing listens there (connection refused)
    "unreachable",  # DNS, routing, reset before any reply
    "tls",  # certificate verification or handshake failed
    "timeout",  # connect or read timeout (a stalled server or stream)
    "server_error",  # HTTP 5xx
    "rate_limited",  # HTTP 429 and Retry-After above the cap (or retries used up)
    "unauthorized",  # HTTP 401/403: a missing or wrong key
    "bad_request",  # any other HTTP 4xx (e.g. an unknown model name)
    "stream_broken",  # the stream died midway, or ended without its end marker
    "bad_response",  # a reply that is not the OpenAI shape
)


@dataclass
class RemoteCompletion(Completion):
    """A remote answer, shaped like the engine's Completion so the turn record is the same."""

    model: str = ""
    n_completion: int = 0  # from the server's usage, else the number of streamed pieces

    @property
    def n_generated(self) -> int:
        return self.n_completion


@dataclass(frozen=True)
class ChatRequest:
    """One chat request: what the hook hands the client."""

    messages: Sequence[Mapping[str, str]]
    model: str
    max_tokens: int
    sampling: Mapping[str, Any] = field(default_factory=dict)
    conversation_id: str | None = None


def api_root(endpoint: str) -> str:
    """``http://h:8000``, ``http://h:8000/`` and ``http://h:8000/v1`` all mean the same server."""
    root = endpoint.strip().rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class RemoteClient:
    """A thread-safe client for one endpoint. ``sleep`` waits on Retry-After (tests inject it)."""

    def __init__(
        self,
        endpoint: str,
        *,
        api_key: SecretStr | None = None,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 120.0,
        retry_after_cap_s: float = 10.0,
        rate_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.root = api_root(endpoint)
        self.retry_after_cap_s = retry_after_cap_s
        self.rate_retries = rate_retries
        self._key = api_key
        timeout = httpx.Timeout(read_timeout_s, connect=connect_timeout_s, pool=connect_timeout_s)
        self._http = httpx.Client(
            base_url=self.root, timeout=timeout, verify=True, transport=transport
        )

    @property
    def host(self) -> str:
        return httpx.URL(self.root).netloc.decode()

    def close(self) -> None:
        self._http.close()

    def _headers(self, conversation_id: str | None = None) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json, text/event-stream"}
        if self._key is not None and self._key.get_secret_value():
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        if conversation_id:
            headers["X-Conversation-Id"] = conversation_id
        return headers

    # --- chat ---------------------------------------------------------------------------

    def chat(
        self,
        request: ChatRequest,
        *,
        stream: bool = True,
        on_text: OnText | None = None,
        on_wait: Callable[[float], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RemoteCompletion:
        """Run one chat completion; raises :class:`RemoteFailure` or :class:`CancelledError`."""
        body = {
            "model": request.model,
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "stream": stream,
            **request.sampling,
        }
        for attempt in range(self.rate_retries + 1):
            try:
                return self._once(body, request, stream, on_text, cancel)
            except RemoteFailure as exc:
                wait = exc.retry_after
                last = attempt == self.rate_retries
                if exc.reason != "rate_limited" or wait is None or wait > self.retry_after_cap_s:
                    raise
                if last:
                    raise RemoteFailure(
                        "rate_limited", f"{exc} (still busy after {attempt + 1} tries)"
                    ) from None
                if on_wait:
                    on_wait(wait)
                if cancel is not None and cancel.wait(wait):
                    raise CancelledError("cancelled while waiting for the remote") from None
                if cancel is None:
                    time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(
        self,
        body: dict[str, Any],
        request: ChatRequest,
        stream: bool,
        on_text: OnText | None,
        cancel: threading.Event | None,
    ) -> RemoteCompletion:
        started = time.perf_counter()
        headers = self._headers(request.conversation_id)
        with _translated(self.host, in_body=False):
            resp = self._http.send(
                self._http.build_request(
                    "POST", "/v1/chat/completions", json=body, headers=headers
                ),
                stream=True,
            )
        try:
            with _translated(self.host, in_body=False):
                _check_status(resp, self.host)
            done = RemoteCompletion(model=request.model)
            with _translated(self.host, in_body=True):
                if stream:
                    self._read_stream(resp, done, started, on_text, cancel)
                else:
                    self._read_whole(resp, done, on_text)
            done.total_s = time.perf_counter() - started
            return done
        finally:
            resp.close()

    def _read_whole(self, resp: httpx.Response, done: RemoteCompletion, on_text: OnText | None):  # noqa: ANN202
        try:
            data = json.loads(resp.read())
            choice = data["choices"][0]
            done.text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise RemoteFailure("bad_response", f"{self.host}: not a chat completion") from exc
        done.finish_reason = choice.get("finish_reason") or "stop"
        _usage(done, data.get("usage"))
        done.ttft_s = resp.elapsed.total_seconds()
        if on_text and done.text:
            on_text(done.text)

    def _read_stream(
        self,
        resp: httpx.Response,
        done: RemoteCompletion,
        started: float,
        on_text: OnText | None,
        cancel: threading.Event | None,
    ) -> None:
        pieces: list[str] = []
        finished = False
        for event in _sse_events(resp.iter_lines()):
            if cancel is not None and cancel.is_set():
                raise CancelledError("the remote answer was cancelled")
            if event == "[DONE]":
                finished = True
                break
            piece, reason, usage = _chunk(event, self.host)
            if piece:
                if not pieces:
                    done.ttft_s = time.perf_counter() - started
                pieces.append(piece)
                if on_text:
                    on_text(piece)
            if reason:
                done.finish_reason = reason
            _usage(done, usage)
        done.text = "".join(pieces)
        if not finished and not done.finish_reason:
            raise RemoteFailure(
                "stream_broken", f"{self.host}: the stream ended before its end marker"
            )
        done.finish_reason = done.finish_reason or "stop"
        done.n_completion = done.n_completion or len(pieces)

    # --- health -------------------------------------------------------------------------

    def probe(self, timeout_s: float | None = None) -> str | None:
        """One health check: None when healthy, else the failure reason code."""
        timeout = httpx.Timeout(timeout_s) if timeout_s else httpx.USE_CLIENT_DEFAULT
        last: RemoteFailure | None = None
        for path in ("/health", "/v1/models"):
            try:
                with _translated(self.host, in_body=False):
                    resp = self._http.get(path, headers=self._headers(), timeout=timeout)
                    if resp.status_code == 404 and path == "/health":
                        continue  # not every server has /health; /v1/models decides
                    _check_status(resp, self.host)
                return None
            except RemoteFailure as exc:
                last = exc
                if exc.reason in {"refused", "unreachable", "tls", "timeout"}:
                    break  # the other path would fail the same way
        return last.reason if last else "bad_response"

    def models(self) -> list[str]:
        """The model names the server lists (``/v1/models``)."""
        with _translated(self.host, in_body=False):
            resp = self._http.get("/v1/models", headers=self._headers())
            _check_status(resp, self.host)
        try:
            return [str(m["id"]) for m in resp.json()["data"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteFailure("bad_response", f"{self.host}: /v1/models is not a list") from exc


class _translated:
    """Turn httpx's exceptions into RemoteFailure with a reason code (a context manager)."""

    def __init__(self, host: str, *, in_body: bool) -> None:
        self.host, self.in_body = host, in_body

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> bool:
        if exc is None or isinstance(exc, RemoteFailure | CancelledError):
            return False
        if isinstance(exc, httpx.TimeoutException):
            what = "connecting" if isinstance(exc, httpx.ConnectTimeout) else "waiting for data"
            raise RemoteFailure("timeout", f"{self.host}: timed out {what}") from exc
        if isinstance(exc, httpx.ConnectError):
            raise _connect_failure(self.host, exc) from exc
        if isinstance(exc, httpx.TransportError):
            reason = "stream_broken" if self.in_body else "unreachable"
            raise RemoteFailure(
                reason, f"{self.host}: connection lost ({type(exc).__name__})"
            ) from exc
        return False


def _connect_failure(host: str, exc: httpx.ConnectError) -> RemoteFailure:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return RemoteFailure(
                "tls",
                f"{host}: TLS verification failed ({getattr(cause, 'reason', None) or 'SSL'})",
                hint="the server's certificate must be valid for its name",
            )
        if isinstance(cause, ConnectionRefusedError):
            break
        cause = cause.__cause__ or cause.__context__
    text = str(exc).lower()
    if "certificate" in text or "ssl" in text:
        return RemoteFailure("tls", f"{host}: TLS verification failed")
    if isinstance(cause, ConnectionRefusedError) or "refused" in text or "errno 111" in text:
        return RemoteFailure("refused", f"{host}: connection refused")
    return RemoteFailure("unreachable", f"{host}: cannot connect ({type(exc).__name__})")


def _check_status(resp: httpx.Response, host: str) -> None:
    code = resp.status_code
    if code < 400:
        return
    detail = _clip(resp.read().decode("utf-8", "replace"))
    msg = f"{host}: HTTP {code}" + (f": {detail}" if detail else "")
    if code == 429:
        raise RemoteFailure("rate_limited", msg, retry_after=retry_after(resp.headers))
    if code in (401, 403):
        raise RemoteFailure(
            "unauthorized", msg, hint="run `macaron remote login` or set MACARON_REMOTE_API_KEY"
        )
    raise RemoteFailure("server_error" if code >= 500 else "bad_request", msg)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _sse_events(lines: Iterator[str]) -> Iterator[str]:
    """The ``data:`` payloads of an SSE stream (comments, event names and ids skipped)."""
    buf: list[str] = []
    for line in lines:
        if not line:
            if buf:
                yield "\n".join(buf)
                buf = []
            continue
        if line.startswith("data:"):
            buf.append(line[5:].lstrip())
    if buf:
        yield "\n".join(buf)


def _chunk(event: str, host: str) -> tuple[str, str | None, Mapping[str, Any] | None]:
    try:
        data = json.loads(event)
        if "error" in data and not data.get("choices"):
            raise RemoteFailure("server_error", f"{host}: error in stream: {_clip(str(data))}")
        choices = data.get("choices") or [{}]
        delta = choices[0].get("delta") or {}
        return delta.get("content") or "", choices[0].get("finish_reason"), data.get("usage")
    except (ValueError, AttributeError, TypeError) as exc:
        raise RemoteFailure("bad_response", f"{host}: a stream event is not JSON") from exc


def _usage(done: RemoteCompletion, usage: Mapping[str, Any] | None) -> None:
    if usage:
        done.n_prompt = int(usage.get("prompt_tokens") or done.n_prompt)
        done.n_completion = int(usage.get("completion_tokens") or done.n_completion)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
