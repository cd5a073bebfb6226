"""The HTTP client against a real llama.cpp OpenAI server on 127.0.0.1, through the fault proxy."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from macaron_local.remote import ChatRequest, RemoteClient, RemoteFailure
from macaron_local.remote.client import scrub
from tests.remote.faultproxy import Fault, FaultProxy, free_port
from tests.remote.venti import SERVED, Venti

HELLO = [{"role": "user", "content": "Say hello."}]


def _client(url: str, key: str | None, read_timeout_s: float = 60.0) -> RemoteClient:
    return RemoteClient(
        url,
        api_key=SecretStr(key) if key else None,
        connect_timeout_s=2.0,
        read_timeout_s=read_timeout_s,
        retry_after_cap_s=2.0,
    )


def _request(**kw: object) -> ChatRequest:
    base = {"messages": HELLO, "model": SERVED, "max_tokens": 12, "sampling": {"temperature": 0.0}}
    return ChatRequest(**{**base, **kw})  # type: ignore[arg-type]


def test_streamed_chat_sends_model_conversation_and_key(proxy: FaultProxy, venti: Venti) -> None:
    pieces: list[str] = []
    with_key = _client(proxy.url + "/v1", venti.api_key)  # a trailing /v1 means the same server
    done = with_key.chat(_request(conversation_id="mcl-abc"), on_text=pieces.append)
    assert done.text and "".join(pieces) == done.text
    assert done.finish_reason in {"stop", "length"} and done.n_generated > 0
    seen = proxy.requests[-1]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.body["model"] == SERVED and seen.body["stream"] is True
    assert seen.headers["x-conversation-id"] == "mcl-abc"
    assert seen.headers["authorization"] == f"Bearer {venti.api_key}"


def test_whole_chat_and_models(proxy: FaultProxy, venti: Venti) -> None:
    client = _client(proxy.url, venti.api_key)
    done = client.chat(_request(), stream=False)
    assert done.text and done.n_prompt > 0 and done.n_generated > 0
    assert SERVED in client.models()
    assert client.probe() is None


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault("drop", after_events=3), "stream_broken"),
        (Fault("stall", after_events=3), "timeout"),
        (Fault("stall", after_events=0), "timeout"),
        (Fault("status", 500), "server_error"),
        (Fault("status", 503), "server_error"),
        (Fault("status", 429, retry_after="60"), "rate_limited"),
        (Fault("status", 429), "rate_limited"),  # no Retry-After: nothing to honour
        (Fault("refuse"), "refused"),
    ],
)
def test_each_fault_is_one_failure_reason(
    proxy: FaultProxy, venti: Venti, fault: Fault, reason: str
) -> None:
    proxy.set(fault)
    pieces: list[str] = []
    with pytest.raises(RemoteFailure) as err:
        client = _client(proxy.url, venti.api_key, 3.0 if fault.kind == "stall" else 60.0)
        client.chat(_request(), on_text=pieces.append)
    assert err.value.reason == reason
    assert venti.api_key not in str(err.value)
    if fault.kind == "drop":
        assert pieces  # some text arrived before the stream died
    if fault.status == 429 and fault.retry_after:
        assert err.value.retry_after == 60.0


def test_429_within_the_cap_is_retried(proxy: FaultProxy, venti: Venti) -> None:
    proxy.set(Fault("status", 429, retry_after="1", times=1))
    waits: list[float] = []
    done = _client(proxy.url, venti.api_key).chat(_request(), on_wait=waits.append)
    assert done.text and waits == [1.0]
    assert [r.path for r in proxy.requests].count("/v1/chat/completions") == 2


def test_wrong_key_is_unauthorized(proxy: FaultProxy) -> None:
    with pytest.raises(RemoteFailure) as err:
        _client(proxy.url, "not-the-key").chat(_request())
    assert err.value.reason == "unauthorized" and "not-the-key" not in str(err.value)


def test_probe_reports_refused(proxy: FaultProxy, venti: Venti) -> None:
    proxy.set(Fault("refuse"))
    assert _client(proxy.url, venti.api_key).probe() == "refused"
    proxy.clear()
    assert _client(proxy.url, venti.api_key).probe() is None


@pytest.fixture
def self_signed_tls(tmp_path: Path) -> Iterator[int]:
    """A TLS listener on 127.0.0.1 with a self-signed certificate (which must be refused)."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    port = free_port()
    sock = socket.create_server(("127.0.0.1", port))
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            try:
                with ctx.wrap_socket(conn, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    stop.set()
    thread.join(2)
    sock.close()


def test_tls_is_verified(self_signed_tls: int) -> None:
    client = _client(f"https://127.0.0.1:{self_signed_tls}", "k")
    with pytest.raises(RemoteFailure) as err:
        client.chat(_request())
    assert err.value.reason == "tls"


def test_a_key_the_server_echoes_is_scrubbed(proxy: FaultProxy, venti: Venti) -> None:
    proxy.set(Fault("echo_auth"))
    with pytest.raises(RemoteFailure) as err:
        _client(proxy.url, venti.api_key).chat(_request())
    assert err.value.reason == "unauthorized"
    assert "Incorrect API key provided: Bearer [redacted]" in str(err.value)
    assert venti.api_key not in str(err.value)


KEY = "mk-test-0123456789abcdef0123"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Incorrect API key provided: Bearer {KEY}", "Incorrect API key provided: Bearer"),
        (f"invalid key {KEY[:14]}****{KEY[-4:]}", "invalid key"),  # a clipped echo
        ("authorization: bearer abcdefgh12345678 refused", "refused"),  # a token not ours
        ("Incorrect API key provided: sk-proj-abc1******wxyz", "Incorrect API key provided:"),
        ("HTTP 503: Macaron-V1-Venti is overloaded, retry", "Macaron-V1-Venti is overloaded"),
    ],
)
def test_scrub_removes_keys_and_token_shapes(text: str, kept: str) -> None:
    out = scrub(text, KEY)
    assert kept in out and KEY[:14] not in out and "abcdefgh12345678" not in out
    assert "sk-proj" not in out
    assert ("[redacted]" in out) == (out != text)
