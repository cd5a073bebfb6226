"""Hot reload of user plugins: a watchdog observer that only enqueues changed paths.

Owns the watcher thread and the queue. Applying a change happens on the caller's thread in
:meth:`PluginWatcher.process` (the app calls it from its loop or a timer), through
:meth:`PluginManager.reload`, which keeps the old version when the new one fails to import.
"""

from __future__ import annotations

import queue
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from macaron_local.plugins.manager import PluginEvent, PluginManager


class _Enqueue(FileSystemEventHandler):
    def __init__(self, inbox: queue.Queue[Path]) -> None:
        self.inbox = inbox

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = Path(str(raw))
            if raw and path.suffix == ".py" and not path.name.startswith((".", "_")):
                self.inbox.put(path)


class PluginWatcher:
    """Watches ``manager.plugin_dir``; ``process()`` applies what changed since the last call."""

    def __init__(self, manager: PluginManager) -> None:
        self.manager = manager
        self.inbox: queue.Queue[Path] = queue.Queue()
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> PluginWatcher:
        folder = self.manager.plugin_dir
        folder.mkdir(parents=True, exist_ok=True)
        self._observer = Observer()
        self._observer.schedule(_Enqueue(self.inbox), str(folder), recursive=False)
        self._observer.daemon = True
        self._observer.start()
        return self

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def pending(self) -> bool:
        return not self.inbox.empty()

    def process(self) -> list[PluginEvent]:
        """Reload each changed path once; returns the events (loaded, reloaded, reload_failed)."""
        changed: dict[Path, None] = {}
        while True:
            try:
                changed[self.inbox.get_nowait()] = None
            except queue.Empty:
                break
        return [self.manager.reload(path) for path in changed]

    def __enter__(self) -> PluginWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
