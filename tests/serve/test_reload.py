"""Hot reload in ``macaron serve`` (a real subprocess on the embedded model): a saved profile is
live for the next request (its hash in /health and in the next turn record); a broken save keeps
the old profile and says which file and line (the log and /health); a saved plugin's tools appear
without a restart, and a broken plugin keeps the old version.
"""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.serve.conftest import SERVE_PROFILE, Server, start_server, write_serve_profile

PLUGIN = '''
from macaron_local.plugins import hookimpl


def ounces(glasses: int = 1) -> int:
    """Ounces in some glasses of water."""
    return {factor} * int(glasses)


@hookimpl
def register_tools(register):
    register.module("water", "water: glasses to ounces")
    register(ounces, name="water.ounces")
'''


def wait_for(check: Callable[[], object], what: str, timeout_s: float = 60.0) -> object:
    """Poll until ``check()`` is truthy (the watcher works on its own threads)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def recorded_hash(server: Server, text: str) -> str:
    """Run one stored turn (a conversation) and read the profile hash its record holds."""
    body = {"model": "serve-fast:L0", "messages": [{"role": "user", "content": text}]}
    req = urllib.request.Request(
        f"{server.url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Conversation-Id": "reload-test"},
    )
    with urllib.request.urlopen(req, timeout=300) as r:
        turn = json.loads(r.read())["macaron"]["turn"]
    with sqlite3.connect(server.db) as db:
        return db.execute("SELECT profile_hash FROM turns WHERE id = ?", [turn]).fetchone()[0]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("reload-home")
    srv = start_server(home, "--profile", write_serve_profile(home))
    yield srv
    assert srv.stop() == 0, srv.log.read_text()


def test_a_saved_profile_is_live_and_a_broken_one_keeps_the_old(served: Server) -> None:
    profile = served.home / "config" / "profiles" / "serve-fast.toml"
    first = served.health()[1]["profile_hash"]
    profile.write_text(SERVE_PROFILE.replace("max_tokens = 24", "max_tokens = 20", 1))
    second = wait_for(
        lambda: (h := served.health()[1]["profile_hash"]) != first and h, "the new hash"
    )
    assert recorded_hash(served, "Say hi.") == second  # the next turn records the edit

    broken = SERVE_PROFILE + "\n[sampling.defaults\nmax_tokens = 3\n"
    line = broken.splitlines().index("[sampling.defaults") + 1
    profile.write_text(broken)
    error = wait_for(lambda: served.health()[1]["reload_error"], "the reload error")
    assert str(profile) in error and f"line {line}" in error
    assert served.health()[1]["profile_hash"] == second  # the old profile still serves
    assert str(profile) in served.log.read_text()  # the log says it too
    assert recorded_hash(served, "Say hi again.") == second

    profile.write_text(SERVE_PROFILE)  # fixed: live again, and the error is gone
    wait_for(lambda: served.health()[1]["profile_hash"] == first, "the fixed profile")
    assert served.health()[1]["reload_error"] is None


def test_a_saved_plugin_is_live_and_a_broken_one_keeps_the_old(served: Server) -> None:
    folder = served.home / "config" / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    assert "water" not in served.health()[1]["tools"]
    (folder / "water.py").write_text(PLUGIN.format(factor=8))
    wait_for(lambda: "water" in served.health()[1]["tools"], "the plugin's tools")
    (folder / "water.py").write_text(PLUGIN.format(factor=8) + "\nthis is not python\n")
    wait_for(lambda: "reload_failed" in served.log.read_text(), "the failed reload in the log")
    assert "water" in served.health()[1]["tools"]  # the previous version stays
    (folder / "water.py").unlink()
    wait_for(lambda: "water" not in served.health()[1]["tools"], "the plugin unloaded")


def test_health_keeps_its_shape(served: Server) -> None:
    status, body = served.health()
    assert status == 200 and body["reload_error"] is None and isinstance(body["tools"], list)
    assert Path(served.log).is_file()
