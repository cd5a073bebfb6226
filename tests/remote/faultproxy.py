"""A loopback HTTP proxy that injects remote faults in front of a real OpenAI-compatible server.

Faults: ``drop`` (forward N SSE events, then reset the connection), ``stall`` (forward N events,
then send nothing more), ``status`` (answer an HTTP status such as 500 or 429 + Retry-After
without asking the server), ``refuse`` (stop listening: connections are refused), and the hostile
streams a real server never sends on purpose: ``flood`` (one SSE event of ``size`` bytes),
``pieces`` (``size`` one-character pieces, then the end marker), ``drip`` (a piece every
``interval_s`` seconds, never ending) and ``echo_auth`` (a 401 whose body echoes the request's
``Authorization`` header, as many gateways answer a wrong key). It records
every request it sees (method, path, headers, JSON body) so tests can check what was sent.
Used by tests/remote and bench/failover.py; binds 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

REASONS = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Fault:
    kind: str = "ok"  # ok | drop | stall | status | refuse
    status: int = 500
    retry_after: str | None = None
    after_events: int = 3  # drop/stall: SSE "data:" events forwarded before the fault
    times: int | None = None  # requests the fault applies to (None: until cleared)
    size: int = 0  # flood: bytes of the one event; pieces: how many
    interval_s: float = 0.05  # drip: seconds between pieces


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None = field(default=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FaultProxy:
    """``start()`` returns the port; ``set(Fault(...))`` arms a fault; ``clear()`` disarms it."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.requests: list[Seen] = []
        self._fault = Fault()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> int:
        self._thread.start()
        self._call(self._listen())
        return self.port

    def stop(self) -> None:
        self._call(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def set(self, fault: Fault) -> None:
        with self._lock:
            self._fault = fault
        listening = self._server is not None
        if fault.kind == "refuse" and listening:
            self._call(self._close())
        elif fault.kind != "refuse" and not listening:
            self._call(self._listen())

    def clear(self) -> None:
        self.set(Fault())

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", self.port, reuse_address=True
        )

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def _take(self) -> Fault:
        with self._lock:
            fault = self._fault
            if fault.times is not None:
                left = fault.times - 1
                self._fault = Fault() if left <= 0 else Fault(**{**fault.__dict__, "times": left})
            return fault

    # --- one connection -----------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _version = lines[0].split(" ", 2)
            headers = {
                k.strip().lower(): v.strip()
                for k, v in (ln.split(":", 1) for ln in lines[1:] if ln)
            }
            size = int(headers.get("content-length", "0"))
            body = await reader.readexactly(size) if size else b""
            self.requests.append(Seen(method, path, headers, _json(body)))
            fault = self._take()
            if fault.kind == "status":
                writer.write(_status_response(fault))
                await writer.drain()
                return
            if fault.kind == "echo_auth":
                writer.write(_echo_auth(headers.get("authorization", "")))
                await writer.drain()
                return
            if fault.kind in HOSTILE:
                streamed = (_json(body) or {}).get("stream", True)
                if streamed or fault.kind == "drip":
                    await HOSTILE[fault.kind](fault, writer)
                else:  # the same answer as one JSON body
                    writer.write(_whole("3" * fault.size, fault.size))
                    await writer.drain()
                return
            await self._forward(method, path, lines[1:], body, fault, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            if not writer.transport.is_closing():
                writer.close()

    async def _forward(
        self,
        method: str,
        path: str,
        header_lines: list[str],
        body: bytes,
        fault: Fault,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        kept = [ln for ln in header_lines if ln and not ln.lower().startswith("connection:")]
        request = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""])
        up_writer.write(request.encode("latin-1") + body)
        await up_writer.drain()
        buf, sent = b"", 0
        try:
            while chunk := await up_reader.read(65536):
                buf += chunk
                cut = _nth(buf, b"data:", fault.after_events)
                if fault.kind in {"drop", "stall"} and cut is not None:
                    writer.write(buf[sent:cut])
                    await writer.drain()
                    if fault.kind == "drop":
                        writer.transport.abort()  # a reset mid-stream
                    else:
                        await reader.read(1)  # send nothing until the client gives up
                    return
                writer.write(buf[sent:])
                sent = len(buf)
                await writer.drain()
        finally:
            up_writer.close()


def _nth(buf: bytes, needle: bytes, n: int) -> int | None:
    """The offset of the (n+1)-th ``needle`` (so n whole events come before it), or None."""
    at = -1
    for _ in range(n + 1):
        at = buf.find(needle, at + 1)
        if at < 0:
            return None
    return at


def _status_response(fault: Fault) -> bytes:
    payload = json.dumps({"error": {"message": f"injected {fault.status}"}}).encode()
    reason = "Too Many Requests" if fault.status == 429 else REASONS.get(fault.status, "Error")
    extra = f"Retry-After: {fault.retry_after}\r\n" if fault.retry_after is not None else ""
    head = (
        f"HTTP/1.1 {fault.status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n{extra}Connection: close\r\n\r\n"
    )
    return head.encode("latin-1") + payload


SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def _event(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}}
    data = {"object": "chat.completion.chunk", "choices": [choice]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


async def _flood(fault: Fault, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD + _event("3" * fault.size) + b"data: [DONE]\n\n")
    await writer.drain()


async def _pieces(fault: Fault, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD)
    for _ in range(fault.size):
        writer.write(_event("3"))
        await writer.drain()
    writer.write(b"data: [DONE]\n\n")
    await writer.drain()


async def _drip(fault: Fault, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD)
    while not writer.transport.is_closing():
        writer.write(_event("3"))
        await writer.drain()
        await asyncio.sleep(fault.interval_s)


def _whole(text: str, n_tokens: int) -> bytes:
    data = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": n_tokens},
    }
    payload = json.dumps(data).encode()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + payload


HOSTILE = {"flood": _flood, "pieces": _pieces, "drip": _drip}


def _echo_auth(authorization: str) -> bytes:
    payload = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {authorization}", "code": 401}}
    ).encode()
    head = (
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + payload


def _json(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body) if body else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
