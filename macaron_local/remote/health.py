"""Whether the remote may be tried now: up, or down until its next health probe (with backoff).

Owns the up/down state of one endpoint. A failure marks it down; while down, heavy turns go
local at once (no waiting on a dead server). Once the backoff window has passed, the next heavy
turn first runs one health probe: success brings the remote back, failure doubles the window
(up to a cap). A 429's Retry-After stretches the window to at least that long.
Must not: sleep, spawn threads or make requests itself (the probe is a callable it is given).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class HealthState:
    up: bool
    failures: int  # consecutive failures (0 when up)
    reason: str | None  # the last failure's reason code
    retry_in_s: float  # seconds until the next probe is allowed (0 when up)


class Health:
    """Up/down with exponential backoff. ``clock`` is injectable so tests need not sleep."""

    def __init__(
        self,
        probe: Callable[[], str | None],
        *,
        base_s: float = 2.0,
        max_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._probe = probe
        self.base_s, self.max_s = base_s, max_s
        self.clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._reason: str | None = None
        self._next_probe = 0.0

    def state(self) -> HealthState:
        with self._lock:
            wait = max(0.0, self._next_probe - self.clock()) if self._failures else 0.0
            return HealthState(self._failures == 0, self._failures, self._reason, wait)

    def usable(self) -> tuple[bool, str | None]:
        """(True, None) when the remote may be tried; else (False, last failure reason)."""
        with self._lock:
            if self._failures == 0:
                return True, None
            if self.clock() < self._next_probe:
                return False, self._reason
        reason = self._probe()  # outside the lock: it is a network call
        if reason is None:
            self.succeeded()
            return True, None
        self.failed(reason)
        return False, reason

    def failed(self, reason: str, retry_after: float | None = None) -> None:
        with self._lock:
            self._failures += 1
            self._reason = reason
            backoff = min(self.max_s, self.base_s * 2 ** (self._failures - 1))
            self._next_probe = self.clock() + max(backoff, retry_after or 0.0)

    def succeeded(self) -> None:
        with self._lock:
            self._failures = 0
            self._reason = None
            self._next_probe = 0.0
