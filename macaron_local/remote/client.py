"""The HTTP client for an OpenAI-compatible remote (Venti, vLLM, SGLang, llama.cpp's server).

Owns one ``httpx.Client`` per endpoint: ``POST /v1/chat/completions`` streamed as SSE (or not),
the ``X-Conversation-Id`` header, the bearer key, TLS verification (always on), connect/read
timeouts, ``Retry-After`` on 429 up to a cap, and health probes (``/health``, then
``/v1/models``). Every way the remote can fail becomes one :class:`RemoteFailure` with a short
``reason`` code the caller records and fails over on.

Every answer is bounded: the bytes read (``max_response_bytes``, counted as they arrive, so one
endless line cannot fill memory), the answer's token budget (no more pieces, usage tokens or
text than ``max_tokens`` allows) and a total deadline (``total_timeout_s``, from the request to
the end marker, so a slow drip of pieces each inside the read timeout still ends). Past a bound
the answer is a ``RemoteFailure``: the caller fails over and keeps none of it.
Every error text that leaves the client is scrubbed of the key and of anything that looks like
a bearer token (servers echo them in 401 bodies), so no notice, record, log or export holds one.
Must not: decide which turns go remote, touch the engine or the store, or put the key in an
error message (errors carry the host, the status and a clipped body, never headers).
"""

from __future__ import annotations

import json
import re
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
    "oversized",  # more bytes than max_response_bytes, or an answer past its token budget
)

# No vocabulary we serve has a token longer than this many bytes of text (SmolLM2's longest is
# 16; the widest BPE vocabularies stay under 128): an answer of n tokens is at most n times it.
MAX_TOKEN_BYTES = 256
ERROR_BODY_BYTES = 16_384  # what is read of an error reply (it is clipped to 200 characters)


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
        total_timeout_s: float = 600.0,
        max_response_bytes: int = 8 << 20,
        retry_after_cap_s: float = 10.0,
        rate_retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.root = api_root(endpoint)
        self.retry_after_cap_s = retry_after_cap_s
        self.rate_retries = rate_retries
        self.total_timeout_s = total_timeout_s
        self.max_response_bytes = max_response_bytes
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
        """Run one chat completion; raises :class:`RemoteFailure` or :class:`CancelledError`.

        The whole call, Retry-After waits included, ends by ``total_timeout_s``."""
        body = {
            "model": request.model,
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
            "stream": stream,
            **request.sampling,
        }
        bound = _Bound(self.host, request.max_tokens, self.max_response_bytes, self.total_timeout_s)
        for attempt in range(self.rate_retries + 1):
            try:
                return self._once(body, request, stream, on_text, cancel, bound)
            except RemoteFailure as exc:
                wait = exc.retry_after
                last = attempt == self.rate_retries
                if exc.reason != "rate_limited" or wait is None or wait > self.retry_after_cap_s:
                    raise
                if last or wait > bound.left():
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
        bound: _Bound,
    ) -> RemoteCompletion:
        started = time.perf_counter()
        headers = self._headers(request.conversation_id)
        with self._translated(in_body=False):
            resp = self._http.send(
                self._http.build_request(
                    "POST", "/v1/chat/completions", json=body, headers=headers
                ),
                stream=True,
            )
        try:
            with self._translated(in_body=False):
                _check_status(resp, self.host)
            done = RemoteCompletion(model=request.model)
            with self._translated(in_body=True):
                if stream:
                    self._read_stream(resp, done, started, on_text, cancel, bound)
                else:
                    self._read_whole(resp, done, on_text, bound)
            done.total_s = time.perf_counter() - started
            return done
        finally:
            resp.close()

    def _read_whole(
        self, resp: httpx.Response, done: RemoteCompletion, on_text: OnText | None, bound: _Bound
    ) -> None:
        try:
            data = json.loads(b"".join(bound.chunks(resp.iter_bytes())))
            choice = data["choices"][0]
            done.text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise RemoteFailure("bad_response", f"{self.host}: not a chat completion") from exc
        done.finish_reason = choice.get("finish_reason") or "stop"
        _usage(done, data.get("usage"))
        bound.answer(done.text, 1, done.n_completion)
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
        bound: _Bound,
    ) -> None:
        pieces: list[str] = []
        size, finished = 0, False
        for event in _sse_events(_lines(bound.chunks(resp.iter_bytes()))):
            if cancel is not None and cancel.is_set():
                raise CancelledError("the remote answer was cancelled")
            if event == "[DONE]":
                finished = True
                break
            piece, reason, usage = _chunk(event, self.host)
            _usage(done, usage)
            if piece:
                size += len(piece.encode("utf-8"))
                bound.answer_size(size, len(pieces) + 1, done.n_completion)
                if not pieces:
                    done.ttft_s = time.perf_counter() - started
                pieces.append(piece)
                if on_text:
                    on_text(piece)
            if reason:
                done.finish_reason = reason
        bound.answer_size(size, len(pieces), done.n_completion)
        done.text = "".join(pieces)
        if not finished and not done.finish_reason:
            raise RemoteFailure(
                "stream_broken", f"{self.host}: the stream ended before its end marker"
            )
        done.finish_reason = done.finish_reason or "stop"
        done.n_completion = done.n_completion or len(pieces)

    def _translated(self, *, in_body: bool) -> _Translated:
        return _Translated(self.host, in_body=in_body, scrub=self.scrub)

    def scrub(self, text: str) -> str:
        """``text`` without this client's key or anything that looks like a bearer token."""
        key = self._key.get_secret_value() if self._key is not None else ""
        return scrub(text, key)

    # --- health -------------------------------------------------------------------------

    def probe(self, timeout_s: float | None = None) -> str | None:
        """One health check: None when healthy, else the failure reason code."""
        timeout = httpx.Timeout(timeout_s) if timeout_s else httpx.USE_CLIENT_DEFAULT
        last: RemoteFailure | None = None
        for path in ("/health", "/v1/models"):
            try:
                with self._translated(in_body=False):
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
        with self._translated(in_body=False):
            resp = self._http.get("/v1/models", headers=self._headers())
            _check_status(resp, self.host)
        try:
            return [str(m["id"]) for m in resp.json()["data"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteFailure("bad_response", f"{self.host}: /v1/models is not a list") from exc


class _Bound:
    """The bounds of one answer: bytes read, its token budget, and a total deadline."""

    def __init__(self, host: str, max_tokens: int, max_bytes: int, total_s: float) -> None:
        self.host, self.max_tokens = host, max_tokens
        self.max_bytes, self.total_s = max_bytes, total_s
        self.deadline = time.monotonic() + total_s
        self.read = 0

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def chunks(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """Pass ``chunks`` on, counting their bytes and watching the clock as each arrives."""
        for chunk in chunks:
            self.read += len(chunk)
            if self.read > self.max_bytes:
                raise RemoteFailure(
                    "oversized",
                    f"{self.host}: the reply passed {self.max_bytes} bytes "
                    "(the profile's [remote] max_response_bytes)",
                )
            self.check_time()
            yield chunk

    def check_time(self) -> None:
        if self.left() < 0:
            raise RemoteFailure(
                "timeout",
                f"{self.host}: the answer did not finish within {self.total_s:g} s "
                "(the profile's [remote] total_timeout_s)",
            )

    def answer(self, text: str, pieces: int, usage_tokens: int) -> None:
        self.answer_size(len(text.encode("utf-8")), pieces, usage_tokens)

    def answer_size(self, size: int, pieces: int, usage_tokens: int) -> None:
        """An answer past its token budget: more pieces or usage tokens, or more text than
        ``max_tokens`` tokens can hold."""
        n = self.max_tokens
        if pieces > n or usage_tokens > n or size > n * MAX_TOKEN_BYTES:
            raise RemoteFailure(
                "oversized",
                f"{self.host}: the answer ran past its budget of {n} tokens "
                f"({pieces} pieces, {size} bytes so far)",
            )


class _Translated:
    """Turn httpx's exceptions into RemoteFailure with a reason code, and scrub every
    RemoteFailure's text on its way out (a context manager)."""

    def __init__(self, host: str, *, in_body: bool, scrub: Callable[[str], str]) -> None:
        self.host, self.in_body, self.scrub = host, in_body, scrub

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or isinstance(exc, CancelledError):
            return
        if isinstance(exc, RemoteFailure):
            exc.args = (self.scrub(exc.message),)
            return
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


_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{4,}")
_KEYISH = re.compile(r"\bsk-[A-Za-z0-9_*-]{8,}")  # the OpenAI shape, echoed clipped or whole
_WORD = re.compile(r"[A-Za-z0-9._~+/=-]{12,}")
REDACTED = "[redacted]"


def scrub(text: str, key: str = "") -> str:
    """``text`` with the key, any piece of it 12 characters or longer (a clipped echo), and
    anything shaped like a bearer token or an API key replaced by ``[redacted]``."""
    if key:
        text = text.replace(key, REDACTED)
        text = _WORD.sub(lambda m: REDACTED if m.group(0) in key else m.group(0), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _KEYISH.sub(REDACTED, text)


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
    detail = _clip(_head(resp, ERROR_BODY_BYTES).decode("utf-8", "replace"))
    msg = f"{host}: HTTP {code}" + (f": {detail}" if detail else "")
    if code == 429:
        raise RemoteFailure("rate_limited", msg, retry_after=retry_after(resp.headers))
    if code in (401, 403):
        raise RemoteFailure(
            "unauthorized", msg, hint="run `macaron remote login` or set MACARON_REMOTE_API_KEY"
        )
    raise RemoteFailure("server_error" if code >= 500 else "bad_request", msg)


def _head(resp: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of the body (an error page can be as large as it likes)."""
    out = b""
    for chunk in resp.iter_bytes():
        out += chunk
        if len(out) >= limit:
            break
    return out[:limit]


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


def _lines(chunks: Iterator[bytes]) -> Iterator[str]:
    """The lines of a byte stream (``\\n`` or ``\\r\\n``); only the new chunk is searched."""
    parts: list[bytes] = []
    for chunk in chunks:
        *whole, rest = chunk.split(b"\n")
        if whole:
            whole[0] = b"".join([*parts, whole[0]])
            parts = []
            for line in whole:
                yield line.rstrip(b"\r").decode("utf-8", "replace")
        if rest:
            parts.append(rest)
    if parts:
        yield b"".join(parts).rstrip(b"\r").decode("utf-8", "replace")


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
