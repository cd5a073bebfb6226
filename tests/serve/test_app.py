"""The app's readiness and admission rules, in-process (no model needed)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from macaron_local.errors import MacaronError, ModelNotFoundError
from macaron_local.serve.admission import Admission, QueueFull
from macaron_local.serve.app import make_app
from macaron_local.serve.settings import ServeSettings, check_bind, is_loopback


def test_health_is_503_while_loading_then_reports_a_load_failure() -> None:
    gate = threading.Event()
    failures: list[BaseException] = []

    def opener():
        gate.wait(30)
        raise ModelNotFoundError("no weights here", hint="run `macaron models pull`")

    app = make_app(ServeSettings(), opener, on_load_error=failures.append)
    with TestClient(app) as http:
        loading = http.get("/health")
        assert loading.status_code == 503 and loading.json()["status"] == "loading"
        assert loading.headers["retry-after"]
        busy = http.post("/v1/chat/completions", json={"messages": []})
        assert busy.status_code == 503 and busy.json()["error"]["code"] == "not_ready"
        gate.set()
        for _ in range(100):
            if failures:
                break
            threading.Event().wait(0.05)
        failed = http.get("/health")
        assert failed.status_code == 503 and failed.json()["status"] == "error"
        assert "no weights here" in failed.json()["error"]
    assert isinstance(failures[0], ModelNotFoundError)


def test_a_wrong_token_is_refused_before_readiness_is_revealed() -> None:
    settings = ServeSettings(token=SecretStr("x" * 20))
    app = make_app(settings, lambda: threading.Event().wait(5) or None)  # type: ignore[arg-type]
    with TestClient(app) as http:
        r = http.get("/v1/models", headers={"Authorization": "Bearer nope"})
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        r = http.get("/v1/models", headers={"Authorization": f"Bearer {'x' * 20}"})
        assert r.status_code == 503  # right token, model still loading


def test_admission_is_fifo_and_bounded() -> None:
    async def scenario() -> list[str]:
        gate = Admission(concurrency=1, queue=2)
        order: list[str] = []
        await gate.acquire()  # the running one

        async def waiter(name: str) -> None:
            await gate.acquire()
            order.append(name)

        a = asyncio.ensure_future(waiter("a"))
        b = asyncio.ensure_future(waiter("b"))
        await asyncio.sleep(0)
        assert gate.waiting == 2
        with pytest.raises(QueueFull):
            await gate.acquire()
        gate.release()
        await a
        gate.release()
        await b
        gate.release()
        stats = gate.stats()
        assert (stats.active, stats.waiting, stats.peak_waiting, stats.rejected) == (0, 0, 2, 1)
        return order

    assert asyncio.run(scenario()) == ["a", "b"]


def test_a_cancelled_waiter_leaves_the_line() -> None:
    async def scenario() -> Admission:
        gate = Admission(concurrency=1, queue=1)
        await gate.acquire()
        w = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        w.cancel()
        with pytest.raises(asyncio.CancelledError):
            await w
        gate.release()
        return gate

    gate = asyncio.run(scenario())
    assert (gate.active, gate.waiting) == (0, 0)


def test_loopback_rules() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.2", "::", "example.org"]))
    check_bind(ServeSettings(host="127.0.0.1"))
    check_bind(ServeSettings(host="0.0.0.0", token=SecretStr("t" * 16)))
    with pytest.raises(MacaronError, match="bearer token is required"):
        check_bind(ServeSettings(host="0.0.0.0"))
