"""Plugin discovery, isolation (raise / hang), enable/disable and safe hot reload."""

from __future__ import annotations

import time
from pathlib import Path

from macaron_local import paths
from macaron_local.plugins import state
from macaron_local.plugins.manager import PluginManager
from macaron_local.plugins.reload import PluginWatcher

GOOD = """
from macaron_local.plugins import hookimpl

def answer():
    return {value}

@hookimpl
def register_tools(register):
    register.module("demo", "a demo tool")
    register(answer, name="demo.answer")
"""
BROKEN = "from macaron_local.plugins import hookimpl\ndef broken(:\n"
HANGS = """
import time
from macaron_local.plugins import hookimpl

@hookimpl
def register_tools(register):
    time.sleep(30)
"""
RAISES = """
from macaron_local.plugins import hookimpl

@hookimpl
def register_components(register):
    raise RuntimeError("boom")
"""


def _user_dir() -> Path:
    return paths.ensure(paths.config_dir() / "plugins")


def _manager(**kw) -> PluginManager:
    return PluginManager(entry_points=False, hook_timeout_s=1.0, **kw)


def test_bundled_plugins_register_the_documented_tools() -> None:
    m = _manager()
    m.load()
    names = m.registry().names()
    for tool in (
        "notes.add",
        "notes.search",
        "todos.add",
        "todos.list",
        "todos.done",
        "reminders.add",
        "reminders.list",
        "files.list",
        "files.read",
        "files.write",
        "files.move",
        "clock.now",
        "clock.days_until",
        "units.convert",
        "shell.run",
    ):
        assert tool in names
    assert m.registry().get("shell.run").always_confirm
    assert {p.source for p in m.plugins()} == {"bundled"}


def test_broken_hanging_and_raising_plugins_are_isolated() -> None:
    folder = _user_dir()
    (folder / "broken.py").write_text(BROKEN)
    (folder / "hangs.py").write_text(HANGS)
    (folder / "raises.py").write_text(RAISES)
    (folder / "good.py").write_text(GOOD.format(value=1))
    m = _manager()
    m.load()
    status = {p.name: p for p in m.plugins()}
    assert status["broken"].status == "failed" and "SyntaxError" in status["broken"].error
    assert status["hangs"].status == "failed"
    assert "did not finish within 1s" in status["hangs"].error
    assert status["raises"].status == "failed" and "RuntimeError: boom" in status["raises"].error
    assert status["good"].status == "loaded" and status["personal"].status == "loaded"
    assert "demo.answer" in m.registry().names()
    assert {e.plugin for e in m.events if e.kind == "failed"} == {"broken", "hangs", "raises"}


def test_reload_keeps_the_old_version_when_the_new_one_is_broken() -> None:
    path = _user_dir() / "good.py"
    path.write_text(GOOD.format(value=1))
    m = _manager(bundled=False)
    m.load()
    assert m.registry().get("demo.answer").func() == 1
    path.write_text(BROKEN)
    ev = m.reload(path)
    assert ev.kind == "reload_failed" and "previous version stays" in ev.message
    assert m.registry().get("demo.answer").func() == 1
    path.write_text(GOOD.format(value=2))
    assert m.reload(path).kind == "reloaded"
    assert m.registry().get("demo.answer").func() == 2
    path.unlink()
    assert m.reload(path).kind == "unloaded"
    assert m.registry().get("demo.answer") is None


def test_watcher_enqueues_and_process_applies(tmp_path: Path) -> None:
    folder = _user_dir()
    m = _manager(bundled=False)
    m.load()
    with PluginWatcher(m) as watcher:
        (folder / "good.py").write_text(GOOD.format(value=7))
        deadline = time.monotonic() + 10
        while not watcher.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # let the write finish before importing
        events = watcher.process()
        assert "demo.answer" in m.registry().names(), events
        (folder / "good.py").write_text(BROKEN)
        deadline = time.monotonic() + 10
        while not watcher.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        assert [e.kind for e in watcher.process()] == ["reload_failed"]
    assert m.registry().get("demo.answer").func() == 7


def test_disabled_plugins_are_not_loaded() -> None:
    state.set_enabled("shell", False)
    m = _manager()
    m.load()
    assert "shell.run" not in m.registry().names()
    assert {p.name: p.status for p in m.plugins()}["shell"] == "disabled"
    m.set_enabled("shell", True)
    assert "shell.run" in m.registry().names()
    assert state.disabled() == frozenset()
