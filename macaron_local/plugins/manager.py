"""Finding, loading, isolating and reloading plugins; collecting what they register.

Owns discovery (the bundled ``macaron_local.bundled.plugins`` package, the entry-point group
``macaron_local.plugins``, the user folder ``<config_dir>/plugins``), the enabled/disabled state,
calling each plugin's hooks in a worker thread under a timeout (a plugin that raises or hangs
becomes a ``failed`` entry and a :class:`PluginEvent`, never an exception that takes the app
down), and safe reload (the old version stays when the new one fails). A plugin's imports and
hooks print to stderr, never stdout (which ``--json`` owns). A tool name taken by two plugins
goes to the bundled one, then an installed one, then the user's, and the loser is reported as a
``conflict``. It must not run tools (the gate does) nor watch files itself (``reload.py``
enqueues paths; ``process`` applies them).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import pluggy

from macaron_local import paths
from macaron_local.agent.tools import ToolRegistry, ToolSpec
from macaron_local.errors import PluginError
from macaron_local.plugins import hookspecs, state

ENTRY_POINT_GROUP = "macaron_local.plugins"
BUNDLED_PACKAGE = "macaron_local.bundled.plugins"
USER_PACKAGE = "macaron_user_plugins"
HOOKS = ("register_tools", "register_components")
Source = Literal["bundled", "entrypoint", "user"]
PRECEDENCE: dict[str, int] = {"bundled": 0, "entrypoint": 1, "user": 2}  # who keeps a tool name


@dataclass(frozen=True)
class PluginInfo:
    name: str
    source: Source
    origin: str  # module name, entry point or file path
    status: Literal["loaded", "disabled", "failed"] = "loaded"
    error: str = ""
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class PluginEvent:
    kind: str  # loaded, failed, disabled, reloaded, reload_failed, unloaded, conflict
    plugin: str
    message: str = ""
    at: float = field(default_factory=time.time)


@dataclass
class Registrations:
    """What one plugin registered (buffered; merged only if its hooks all finished)."""

    tools: list[ToolSpec] = field(default_factory=list)
    modules: dict[str, str] = field(default_factory=dict)
    components: dict[str, dict[str, Any]] = field(default_factory=dict)


class ToolRegistrar:
    """The ``register`` given to ``register_tools``."""

    def __init__(self, plugin: str, regs: Registrations) -> None:
        self._plugin, self._regs = plugin, regs

    def __call__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        description: str = "",
        side_effect: bool = False,
        always_confirm: bool = False,
        discrete: bool = False,
    ) -> None:
        doc = description or (func.__doc__ or "").strip().split("\n")[0]
        self._regs.tools.append(
            ToolSpec(name, func, doc, side_effect, always_confirm, discrete, self._plugin)
        )

    def module(self, name: str, description: str) -> None:
        self._regs.modules[name] = description


def _registrar(hook: str, plugin: str, regs: Registrations) -> Callable[..., Any]:
    if hook == "register_tools":
        return ToolRegistrar(plugin, regs)
    return lambda type_name, spec: regs.components.__setitem__(str(type_name), dict(spec))


def call_with_timeout(fn: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Run ``fn`` in a daemon thread; PluginError if it raises or outlives ``timeout_s``.

    A hung thread cannot be killed in Python: it is abandoned (daemon) and its late effects are
    discarded by the caller, which only merges buffered registrations.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            with stdout_to_stderr():
                box["value"] = fn()
        except BaseException as exc:  # reported as PluginError below
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True, name=f"plugin:{what}")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise PluginError(f"{what} did not finish within {timeout_s:g}s")
    if "error" in box:
        exc = box["error"]
        raise PluginError(f"{what} failed: {type(exc).__name__}: {exc}") from exc
    return box.get("value")


_route_lock = threading.Lock()
_in_plugins = threading.local()  # depth of plugin code running on this thread
_active = [0]  # plugin threads inside stdout_to_stderr, all threads together


class _PluginStdout:
    """``sys.stdout`` while plugin code runs: what a plugin thread writes goes to stderr, what
    any other thread writes goes to the stdout this wraps. Swapping ``sys.stdout`` itself for
    stderr (as before) sent every thread's output there: a test runner's capture or a command
    printing its table at the same moment lost its stdout."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def _target(self) -> Any:
        return sys.stderr if getattr(_in_plugins, "depth", 0) else self.wrapped

    def write(self, text: str) -> int:
        return int(self._target().write(text))

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


@contextlib.contextmanager
def stdout_to_stderr() -> Any:
    """What plugin code on this thread prints goes to stderr: stdout carries ``--json``'s one
    object. Only this thread is diverted. The router stays installed while any plugin thread
    is inside (an abandoned one may end much later); the last one out removes only the router
    layer, so it never puts back a stdout that someone else has replaced since."""
    with _route_lock:
        if not isinstance(sys.stdout, _PluginStdout):
            sys.stdout = _PluginStdout(sys.stdout)
        _active[0] += 1
    _in_plugins.depth = getattr(_in_plugins, "depth", 0) + 1
    try:
        yield
    finally:
        _in_plugins.depth -= 1
        with _route_lock:
            _active[0] -= 1
            if not _active[0] and isinstance(sys.stdout, _PluginStdout):
                sys.stdout = sys.stdout.wrapped


@dataclass
class _Loaded:
    info: PluginInfo
    regs: Registrations


@dataclass(frozen=True)
class _Candidate:
    name: str
    source: Source
    origin: str
    load: Callable[[], Any]


class PluginManager:
    """All plugins of one app. ``load()`` once, then ``registry()``, ``skills()``, ..."""

    def __init__(
        self,
        *,
        config_dir: Path | None = None,
        user_dir: Path | None = None,
        bundled: bool = True,
        entry_points: bool = True,
        hook_timeout_s: float = 30.0,  # an import on a busy 2-core machine takes seconds
    ) -> None:
        self.config_dir = config_dir
        self.user_dir = user_dir
        self.use_bundled, self.use_entry_points = bundled, entry_points
        self.hook_timeout_s = hook_timeout_s
        self.events: list[PluginEvent] = []
        self._loaded: dict[str, _Loaded] = {}
        self._infos: dict[str, PluginInfo] = {}
        self._lock = threading.RLock()

    @property
    def plugin_dir(self) -> Path:
        return self.user_dir or (self.config_dir or paths.config_dir()) / "plugins"

    # --- discovery and loading -------------------------------------------------------------

    def discover(self) -> list[_Candidate]:
        found: list[_Candidate] = []
        if self.use_bundled:
            pkg = importlib.import_module(BUNDLED_PACKAGE)
            for mod in pkgutil.iter_modules(pkg.__path__):
                if not mod.name.startswith("_"):
                    full = f"{BUNDLED_PACKAGE}.{mod.name}"
                    found.append(
                        _Candidate(
                            mod.name,
                            "bundled",
                            full,
                            functools.partial(importlib.import_module, full),
                        )
                    )
        if self.use_entry_points:
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                found.append(_Candidate(ep.name, "entrypoint", ep.value, ep.load))
        folder = self.plugin_dir
        if folder.is_dir():
            for path in sorted(folder.glob("*.py")):
                if not path.name.startswith("_"):
                    found.append(
                        _Candidate(path.stem, "user", str(path), functools.partial(load_file, path))
                    )
        return found

    def load(self) -> list[PluginEvent]:
        """Load every enabled plugin; returns the events of this load."""
        start = len(self.events)
        off = state.disabled(self.config_dir)
        with self._lock:
            for cand in self.discover():
                if cand.name in self._infos:
                    first = self._infos[cand.name].origin
                    self._event(
                        "conflict",
                        cand.name,
                        f"{cand.origin} ignored: a plugin named "
                        f"{cand.name!r} is already loaded from {first}",
                    )
                elif cand.name in off:
                    self._infos[cand.name] = PluginInfo(
                        cand.name, cand.source, cand.origin, "disabled"
                    )
                else:
                    self._load(cand)
        return self.events[start:]

    def _load(self, cand: _Candidate) -> bool:
        try:
            module = call_with_timeout(
                cand.load, self.hook_timeout_s, f"importing plugin {cand.name}"
            )
            regs = self._collect(cand.name, module)
        except PluginError as exc:
            self._infos[cand.name] = PluginInfo(
                cand.name, cand.source, cand.origin, "failed", str(exc)
            )
            self._event("failed", cand.name, str(exc))
            return False
        self._activate(cand, regs)
        self._event("loaded", cand.name, cand.origin)
        return True

    def _activate(self, cand: _Candidate, regs: Registrations) -> None:
        info = PluginInfo(
            cand.name,
            cand.source,
            cand.origin,
            "loaded",
            tools=tuple(sorted(t.name for t in regs.tools)),
        )
        self._loaded[cand.name] = _Loaded(info, regs)
        self._infos[cand.name] = info

    def _collect(self, name: str, module: Any) -> Registrations:
        """Call each hook the module implements, one thread and one timeout per hook."""
        regs = Registrations()
        probe = pluggy.PluginManager(hookspecs.PROJECT)
        probe.add_hookspecs(hookspecs)
        try:
            probe.register(module, name=name)  # validates hook names and arguments
        except (pluggy.PluginValidationError, ValueError) as exc:
            raise PluginError(f"plugin {name}: {exc}") from exc
        for hook in HOOKS:
            for impl in getattr(probe.hook, hook).get_hookimpls():
                reg = _registrar(hook, name, regs)
                call_with_timeout(
                    functools.partial(impl.function, register=reg),
                    self.hook_timeout_s,
                    f"plugin {name}.{hook}",
                )
        return regs

    # --- reload ----------------------------------------------------------------------------

    def reload(self, path: Path) -> PluginEvent:
        """Reload (or load, or unload) the user plugin at ``path``; the old one stays on error."""
        path = Path(path)
        name = path.stem
        with self._lock:
            if not path.exists():
                return self._unload(name)
            if name in state.disabled(self.config_dir):
                return self._event("disabled", name, "not reloaded: the plugin is disabled")
            cand = _Candidate(name, "user", str(path), lambda: load_file(path))
            had = name in self._loaded
            try:
                module = call_with_timeout(
                    cand.load, self.hook_timeout_s, f"importing plugin {name}"
                )
                regs = self._collect(name, module)
            except PluginError as exc:
                if not had:
                    self._infos[name] = PluginInfo(name, "user", str(path), "failed", str(exc))
                kept = "; the previous version stays loaded" if had else ""
                return self._event("reload_failed", name, f"{exc}{kept}")
            self._activate(cand, regs)
            return self._event("reloaded" if had else "loaded", name, str(path))

    def _unload(self, name: str) -> PluginEvent:
        self._loaded.pop(name, None)
        self._infos.pop(name, None)
        return self._event("unloaded", name, "")

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Persist the choice in plugins.toml and apply it now."""
        state.set_enabled(name, enabled, self.config_dir)
        with self._lock:
            if not enabled and name in self._loaded:
                info = self._loaded.pop(name).info
                self._infos[name] = replace(info, status="disabled", tools=())
                self._event("disabled", name, "")
            elif enabled and self._infos.get(name, None) and name not in self._loaded:
                info = self._infos.pop(name)
                loader = (
                    (lambda: load_file(Path(info.origin)))
                    if info.source == "user"
                    else (lambda: importlib.import_module(info.origin))
                )
                self._load(_Candidate(name, info.source, info.origin, loader))

    # --- what plugins registered -----------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        return [self._infos[n] for n in sorted(self._infos)]

    def registry(self) -> ToolRegistry:
        """A fresh registry of every loaded plugin's tools. A name two plugins register goes to
        the bundled one, then an installed one, then the user's (a user plugin cannot take over
        a bundled tool); each loser is a ``conflict`` event (once)."""
        reg = ToolRegistry()
        with self._lock:
            order = sorted(self._loaded, key=lambda n: (PRECEDENCE[self._loaded[n].info.source], n))
            for name in order:
                regs = self._loaded[name].regs
                for module, text in regs.modules.items():
                    if module not in reg.modules:  # nor the router's line for its module
                        reg.describe_module(module, text)
                for spec in regs.tools:
                    try:
                        reg.add(spec)
                    except PluginError as exc:
                        self._event_once("conflict", name, f"{exc}; plugin {name!r}'s is ignored")
        return reg

    def components(self) -> dict[str, dict[str, Any]]:
        return {k: v for r in self._all() for k, v in r.components.items()}

    def _all(self) -> list[Registrations]:
        with self._lock:
            return [self._loaded[n].regs for n in sorted(self._loaded)]

    def _event(self, kind: str, plugin: str, message: str) -> PluginEvent:
        ev = PluginEvent(kind, plugin, message)
        self.events.append(ev)
        return ev

    def _event_once(self, kind: str, plugin: str, message: str) -> None:
        if not any((e.kind, e.plugin, e.message) == (kind, plugin, message) for e in self.events):
            self._event(kind, plugin, message)


def load_file(path: Path) -> types.ModuleType:
    """Import a user plugin file as ``macaron_user_plugins.<stem>`` (a fresh module each time)."""
    if USER_PACKAGE not in sys.modules:
        pkg = types.ModuleType(USER_PACKAGE)
        pkg.__path__ = []
        sys.modules[USER_PACKAGE] = pkg
    name = f"{USER_PACKAGE}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # raises on a broken file: the caller keeps the old one
    sys.modules[name] = module
    return module
