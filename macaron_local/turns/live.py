"""Hot reload of a running runtime: its profile and the user's plugins, live for the next turn.

Owns the two watchers of one :class:`~macaron_local.turns.pipeline.Runtime` (``hcp/watch.py``'s
``ProfileWatcher``, ``plugins/reload.py``'s ``PluginWatcher``) and what applying a change means.
A valid profile edit (approved where it must be, same base and resources) is swapped in whole,
its adapter bindings resolved and checked again; the next turn records its hash. A broken edit
keeps the old profile and is reported with its file and line or field (``Runtime.reload_error``,
a log warning, ``on_event``). A plugin edit re-imports that file and rebuilds the tool registry;
a failing one keeps the old version and says why. ``macaron serve`` and the app (through the
facade) start it; one-shot commands such as ``ask`` do not. A turn already running reads the
new profile from the moment it lands; agent sessions keep the tools they were made with.
Must not: touch a UI (``on_event`` runs on a watcher thread) or change the engine's base.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from macaron_local.errors import ContractError, MacaronError
from macaron_local.genui.extend import with_plugins
from macaron_local.hcp import Profile, ProfileWatcher, check_approved
from macaron_local.manifests import get_manifest
from macaron_local.plugins.reload import PluginWatcher
from macaron_local.store import open_db
from macaron_local.turns import adapters as adapter_bindings
from macaron_local.turns.tools import tool_descriptions

if TYPE_CHECKING:
    from macaron_local.turns.pipeline import Runtime

log = logging.getLogger(__name__)

OnEvent = Callable[
    [str, str], None
]  # (kind, message); kind: profile | profile_error | plugin | plugin_error
_STOP = Path("/")  # not a plugin file: the plugin worker's stop signal
DEBOUNCE_S = 0.1  # one save is a burst of events


class LiveReload:
    """Both watchers of one runtime; ``start`` once, ``stop`` at close."""

    def __init__(self, runtime: Runtime, on_event: OnEvent | None = None) -> None:
        self.runtime = runtime
        self.on_event = on_event
        self._profiles = ProfileWatcher(
            runtime.profile_ref, self._profile_changed, self._profile_failed, check=self._check
        )
        self._plugins = PluginWatcher(runtime.plugins)
        self._worker: threading.Thread | None = None

    def start(self) -> LiveReload:
        self._profiles.start()
        self._plugins.start()
        self._worker = threading.Thread(target=self._plugin_loop, daemon=True, name="plugin-reload")
        self._worker.start()
        return self

    def stop(self) -> None:
        self._profiles.stop()
        self._plugins.stop()
        if self._worker is not None:
            self._plugins.inbox.put(_STOP)
            self._worker.join()
            self._worker = None

    # --- profile ---------------------------------------------------------------------------

    def _check(self, new: Profile) -> None:
        """Runs on the watcher thread: what a running engine cannot take is a failed reload."""
        old = self.runtime.profile
        for field in ("base", "resources"):
            if getattr(new, field) != getattr(old, field):
                raise ContractError(
                    f"[{field}] changed: that needs a restart; still serving the previous profile",
                    path=new.source,
                    where=field,
                )
        db = open_db(self.runtime.db_path)  # store connections are per thread
        try:
            check_approved(db, new)
        finally:
            db.close()

    def _profile_changed(self, new: Profile) -> None:
        try:
            warnings = apply_profile(self.runtime, new)
        except MacaronError as exc:
            self._profile_failed(exc)
            return
        self._tell("profile", f"profile reloaded from {new.source}: hash {new.content_hash[:12]}")
        for w in warnings:
            self._tell("profile_error", w)

    def _profile_failed(self, exc: MacaronError) -> None:
        self.runtime.reload_error = (
            f"{exc} — still serving profile hash " + (self.runtime.profile.content_hash[:12])
        )
        self._tell("profile_error", self.runtime.reload_error)

    # --- plugins ---------------------------------------------------------------------------

    def _plugin_loop(self) -> None:
        inbox = self._plugins.inbox
        while (first := inbox.get()) != _STOP:
            stop = _coalesce(inbox)
            inbox.put(first)  # process() drains the inbox itself
            for event in self._plugins.process():
                failed = event.kind in {"reload_failed", "failed", "conflict"}
                said = f": {event.message}" if event.message else ""
                self._tell(
                    "plugin_error" if failed else "plugin",
                    f"plugin {event.plugin}: {event.kind}{said}",
                )
            apply_plugins(self.runtime)
            if stop:
                return

    def _tell(self, kind: str, message: str) -> None:
        (log.warning if kind.endswith("_error") else log.info)("%s", message)
        if self.on_event is not None:
            try:
                self.on_event(kind, message)
            except Exception:  # a broken listener must not stop the reloads
                log.exception("reload listener failed")


def _coalesce(inbox: queue.Queue[Path]) -> bool:
    """Wait out the burst of one save (its paths stay queued); True if asked to stop."""
    held: list[Path] = []
    stop = False
    while True:
        try:
            item = inbox.get(timeout=DEBOUNCE_S)
        except queue.Empty:
            break
        if item == _STOP:
            stop = True
            break
        held.append(item)
    for item in held:
        inbox.put(item)
    return stop


def apply_profile(runtime: Runtime, new: Profile) -> list[str]:
    """Serve ``new`` from the next turn on; its adapters are resolved, checked and loaded again
    where a revision changed. Returns warnings (an adapter that failed falls back to base)."""
    manifest = get_manifest(new.base.model)
    wanted = adapter_bindings.resolve(new, manifest)
    current = runtime.bindings
    changed = {
        label: b
        for label, b in wanted.items()
        if label not in current
        or (current[label].revision, current[label].path) != (b.revision, b.path)
    }
    served, warnings = adapter_bindings.load(runtime.engine, new, changed, manifest.sha256)
    runtime.bindings = {
        label: served.get(label, current.get(label, b)) for label, b in wanted.items()
    }
    runtime.profile = new
    runtime.remote.profile = new
    runtime.reset_caches()
    runtime.reload_error = None
    runtime.warnings += warnings
    return warnings


def apply_plugins(runtime: Runtime) -> None:
    """Rebuild the tool registry and the UI catalogue from the plugins loaded now (new agent
    sessions get the tools, the next GenUI answer the components)."""
    runtime.registry = runtime.plugins.registry()
    runtime.tools = tool_descriptions(runtime.registry)
    runtime.ui_catalogue, problems = with_plugins(runtime.plugins.components())
    for problem in problems:
        log.warning("plugin component: %s", problem)
    runtime.reset_caches()
