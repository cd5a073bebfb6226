"""Fixtures for hybrid mode: a real llama.cpp OpenAI server, a fault proxy, a test keyring.

The server (``python -m llama_cpp.server`` on the embedded model) and the proxy in front of it
live for the whole session; every test gets the proxy cleared. No OS keyring is ever touched:
an autouse fixture installs a file-based keyring (its file outside MACARON_HOME).
"""

from __future__ import annotations

import json
import os
import secrets as pysecrets
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from macaron_local.remote.hybrid import RemoteHook
from macaron_local.turns.pipeline import Runtime
from tests.conftest import macaron_home
from tests.remote.faultproxy import FaultProxy
from tests.remote.venti import Venti, start_venti

TEST_PROFILE = """
schema_version = 1
extends = "hybrid"

[profile]
id = "test-hybrid"
version = "1.0.0"
description = "hybrid with short answers, a small local context and short timeouts, for tests"

[summary]
max_tokens = 24

[sampling.defaults]
temperature = 0.0
max_tokens = 16

[sampling.overrides.L2]
max_tokens = 16

[resources]
n_ctx = 1024

[memory]
answer_reserve = 256

[remote]
connect_timeout_s = 2.0
read_timeout_s = 60.0
"""


class FileKeyring(KeyringBackend):
    """A keyring backend that keeps passwords in one JSON file (tests only)."""

    priority = 1  # type: ignore[assignment]
    default_path = Path(os.devnull)

    def __init__(self, path: Path | None = None) -> None:
        super().__init__()
        self.path = path or self.default_path

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self.path.write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if data.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError("no such password")
        self.path.write_text(json.dumps(data))


@pytest.fixture(autouse=True)
def test_keyring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FileKeyring]:
    """A fresh file keyring for every test; the previous backend comes back afterwards."""
    previous = keyring.get_keyring()
    backend = FileKeyring(tmp_path_factory.mktemp("keyring") / "keys.json")
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture(scope="session")
def venti(model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venti]:
    key = "mk-test-" + pysecrets.token_hex(16)
    server = start_venti(model_path, key, tmp_path_factory.mktemp("venti") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _proxy(venti: Venti) -> Iterator[FaultProxy]:
    proxy = FaultProxy(venti.port)
    proxy.start()
    yield proxy
    proxy.stop()


@pytest.fixture
def proxy(_proxy: FaultProxy) -> Iterator[FaultProxy]:
    """The fault proxy, healthy and with no recorded requests."""
    _proxy.clear()
    _proxy.requests.clear()
    yield _proxy
    _proxy.clear()


@pytest.fixture
def remote_env(monkeypatch: pytest.MonkeyPatch, proxy: FaultProxy, venti: Venti) -> FaultProxy:
    """MACARON_REMOTE_URL points at the proxy; the key is in MACARON_REMOTE_API_KEY."""
    monkeypatch.setenv("MACARON_REMOTE_URL", proxy.url)
    monkeypatch.setenv("MACARON_REMOTE_API_KEY", venti.api_key)
    return proxy


@pytest.fixture(scope="module")
def runtime_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("hybrid-home")
    folder = home / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "test-hybrid.toml").write_text(TEST_PROFILE)
    return home


@pytest.fixture(scope="module")
def _runtime(runtime_home: Path) -> Iterator[Runtime]:
    with macaron_home(runtime_home):
        rt = Runtime.open("test-hybrid", db_path=runtime_home / "data" / "macaron.db")
    yield rt
    rt.close()


class Clock:
    """A clock the test moves by hand (the health gate's backoff needs no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def runtime(_runtime: Runtime, clock: Clock) -> Iterator[Runtime]:
    """The module's runtime with a fresh remote hook (healthy, on the test clock)."""
    _runtime.remote.close()
    _runtime.remote = RemoteHook(_runtime.profile, retry_after_cap_s=2.0, clock=clock)
    yield _runtime
    _runtime.finish_pending()
