"""``macaron serve`` edges, on a real subprocess: bodies it cannot read are a 400 with a JSON
error (not a 500 and a traceback), a body past ``--max-body-bytes`` is a 413 before it is read
whole, and a turn meant for the remote that ran locally says so: ``backend`` and
``failover_reason`` in the ``macaron`` extension, and for streams a ``notice`` event.

The profile extends the bundled ``hybrid`` (L2 is heavy); ``MACARON_REMOTE_URL`` names a port
nothing listens on, so every L2 turn fails over as ``refused``.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest

from tests.remote.faultproxy import free_port
from tests.serve.conftest import Server, server_env, start_server

PROFILE = """
schema_version = 1
extends = "hybrid"

[profile]
id = "serve-edges"
version = "1.0.0"
description = "hybrid with short answers, for the server edge tests"

[summary]
max_tokens = 24

[sampling.defaults]
temperature = 0.0
max_tokens = 24

[remote]
connect_timeout_s = 2.0
"""
LIMIT = 65536


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("edges-home")
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "serve-edges.toml").write_text(PROFILE)
    env = server_env(home, MACARON_REMOTE_URL=f"http://127.0.0.1:{free_port()}")
    srv = start_server(home, "--profile", "serve-edges", "--max-body-bytes", str(LIMIT), env=env)
    yield srv
    assert srv.stop() == 0, srv.log.read_text()


def post(server: Server, body: bytes | list[bytes], **headers: str) -> tuple[int, bytes]:
    url = urlparse(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=300)
    chunked = isinstance(body, list)
    base = {"Content-Type": "application/json", **headers}
    if chunked:
        base["Transfer-Encoding"] = "chunked"
    conn.request("POST", "/v1/chat/completions", body=iter(body) if chunked else body,
                 headers=base, encode_chunked=chunked)  # fmt: skip
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def chat(text: str, model: str = "serve-edges:L0", **extra: object) -> bytes:
    return json.dumps(
        {"model": model, "messages": [{"role": "user", "content": text}], **extra}
    ).encode()


@pytest.mark.parametrize(
    "body",
    [
        b'{"messages": [{"role": "user", "content": "\xff\xfe hi"}]}',
        b'{"messages": [{"role": "user", "content": "\\ud800 hi"}]}',
        b'{"messages": ' + b"[" * 30_000 + b"]" * 30_000 + b"}",
        b'{"messages": [{"role": "user", "content": "hi", "x": '
        + b"{" * 9_000
        + b"}" * 9_000
        + b"}]}",
    ],
    ids=["invalid-utf8", "lone-surrogate", "30000-deep", "deep-extra"],
)
def test_a_body_it_cannot_read_is_a_400_json_error(edges: Server, body: bytes) -> None:
    status, data = post(edges, body)
    assert status == 400, data[:300]
    error = json.loads(data)["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert "Traceback" not in edges.log.read_text()


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_body_past_the_limit_is_a_413(edges: Server, chunked: bool) -> None:
    big = chat("hi " * (LIMIT // 2))
    status, data = post(
        edges, [big[i : i + 8192] for i in range(0, len(big), 8192)] if chunked else big
    )
    assert status == 413 and json.loads(data)["error"]["code"] == "body_too_large"
    assert edges.health()[0] == 200  # and the server goes on


def test_a_failover_is_told_in_the_reply(edges: Server) -> None:
    status, data = post(edges, chat("Reverse a string in Python.", "serve-edges:L2"),
                        **{"X-Conversation-Id": "edges-1"})  # fmt: skip
    assert status == 200, data[:300]
    body = json.loads(data)
    ext = body["macaron"]
    assert (ext["backend"], ext["failover_reason"]) == ("local", "refused")
    assert body["choices"][0]["message"]["content"]
    # returned as soon as the turn committed: its summary is still being written
    assert body["usage"]["summary_pending"] is True


def test_a_failover_is_an_event_in_the_stream(edges: Server) -> None:
    status, data = post(edges, chat("Sort a list in Python.", "serve-edges:L2", stream=True),
                        **{"X-Conversation-Id": "edges-2"})  # fmt: skip
    assert status == 200
    events = [
        json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: {")
    ]
    notices = [e["macaron"]["notice"] for e in events if "notice" in e.get("macaron", {})]
    [notice] = notices  # refused, or remote_down: the refusal of the turn before put it in backoff
    assert notice["kind"] == "failover" and notice["reason"] in {"refused", "remote_down"}
    last = [e for e in events if e["choices"] and e["choices"][0]["finish_reason"]][-1]
    assert (last["macaron"]["backend"], last["macaron"]["failover_reason"]) == (
        "local",
        notice["reason"],
    )


def test_a_local_turn_says_local(edges: Server) -> None:
    status, data = post(edges, chat("Say hi."), **{"X-Conversation-Id": "edges-3"})
    ext = json.loads(data)["macaron"]
    assert status == 200 and ext["backend"] == "local" and "failover_reason" not in ext
