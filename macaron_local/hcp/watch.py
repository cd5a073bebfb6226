"""Hot reload of one profile while the app runs (watchdog), safe to fail.

Owns: watching the folders a profile can come from (the user's profile folder, the bundled
folder, and the folder of an explicit path), and reloading on a worker thread. The watchdog
thread only enqueues paths. The worker reloads the whole profile (so an edit to a profile it
``extends`` counts too); a reload that fails keeps the previous profile and reports the
:class:`ContractError` through ``on_error``. Callbacks run on the worker thread: a UI must hop to
its own thread (Textual: ``call_from_thread``). The optional ``check`` (e.g. the approval gate)
runs there too, so it must open its own store connection: store connections are per thread.
Must not: touch the UI or decide approvals itself.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from macaron_local import paths
from macaron_local.errors import ContractError, MacaronError
from macaron_local.hcp.loader import bundled_dir, load_profile, user_dir
from macaron_local.hcp.schema import Profile

T = TypeVar("T")

log = logging.getLogger(__name__)

_WRITES = {"created", "modified", "moved", "deleted", "closed"}  # not opened / closed_no_write
_STOP = object()


class _Enqueue(FileSystemEventHandler):
    """Runs on watchdog's thread: puts the touched .toml paths on the queue, nothing else."""

    def __init__(self, out: queue.Queue[object]) -> None:
        self._out = out

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type not in _WRITES:
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = raw.decode() if isinstance(raw, bytes) else raw
            if path and path.endswith(".toml"):
                self._out.put(path)


class ProfileWatcher:
    """Keeps :attr:`current` up to date with the files of profile ``name`` (a name or a path)."""

    def __init__(
        self,
        name: str | Path,
        on_change: Callable[[Profile], None],
        on_error: Callable[[MacaronError], None],
        *,
        known_revisions: set[str] | None = None,
        check: Callable[[Profile], None] | None = None,
        debounce_s: float = 0.1,
    ) -> None:
        self._ref = name
        self._on_change, self._on_error = on_change, on_error
        self._known, self._check = known_revisions, check
        self._debounce = debounce_s
        self._queue: queue.Queue[object] = queue.Queue()
        self._current: Profile | None = None
        self._failing = False
        self._observer: BaseObserver | None = None
        self._worker: threading.Thread | None = None

    @property
    def current(self) -> Profile | None:
        return self._current

    def start(self) -> Profile:
        """Load the profile (raising ContractError if it is invalid now) and start watching."""
        self._current = self._load()
        observer = Observer()
        handler = _Enqueue(self._queue)
        for folder in self._folders():
            observer.schedule(handler, str(folder), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._worker = threading.Thread(target=self._run, name="hcp-reload", daemon=True)
        self._worker.start()
        return self._current

    def stop(self) -> None:
        """Stop watching and wait for both threads."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join()
            self._observer = None
        if self._worker is not None:
            self._queue.put(_STOP)
            self._worker.join()
            self._worker = None

    def __enter__(self) -> ProfileWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _folders(self) -> list[Path]:
        folders = [paths.ensure(user_dir()), bundled_dir()]
        ref = str(self._ref)
        if isinstance(self._ref, Path) or "/" in ref or ref.endswith(".toml"):
            folders.append(Path(ref).expanduser().resolve().parent)
        unique = {f.resolve(): f for f in folders if f.is_dir()}
        return list(unique.values())

    def _load(self) -> Profile:
        profile = load_profile(self._ref, known_revisions=self._known)
        if self._check is not None:
            self._check(profile)
        return profile

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self._coalesce():
                return
            self.reload()

    def _coalesce(self) -> bool:
        """Swallow the burst of events one save makes; True when asked to stop meanwhile."""
        while True:
            try:
                item = self._queue.get(timeout=self._debounce)
            except queue.Empty:
                return False
            if item is _STOP:
                return True

    def reload(self) -> None:
        """Reload now; on failure keep the previous profile and report why."""
        try:
            new = self._load()
        except MacaronError as exc:
            self._fail(exc)
            return
        except Exception as exc:  # a bug in a check must not kill the thread or the profile
            log.exception("profile reload failed")
            self._fail(ContractError(f"could not reload: {type(exc).__name__}: {exc}"))
            return
        old, was_failing = self._current, self._failing
        self._failing = False
        if old is not None and new.content_hash == old.content_hash and not was_failing:
            return  # a save that changed nothing that matters (comments, whitespace)
        self._current = new
        self._call(self._on_change, new)

    def _fail(self, exc: MacaronError) -> None:
        self._failing = True
        self._call(self._on_error, exc)

    @staticmethod
    def _call(callback: Callable[[T], None], arg: T) -> None:
        try:
            callback(arg)
        except Exception:  # a broken callback must not kill the reload thread
            log.exception("profile watcher callback failed")
