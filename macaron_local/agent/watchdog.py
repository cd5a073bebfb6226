"""Per-block CPU and wall-clock limits, measured and enforced by the host from ``/proc``.

Owns one thread per REPL child that reads the child's CPU time from the kernel (never from
anything the child reports) and, when a block goes over ``cpu_seconds`` or ``wall_seconds``,
interrupts it (SIGINT: the block raises ``KeyboardInterrupt`` and the namespace survives); if the
block is still running :data:`GRACE_S` later (it ignored or caught the interrupt, or sits in C
code), it kills the child, and with it the sandbox. Between blocks the child should be idle:
code left running after its block (a thread, or a forged "done") that burns more than one
block's CPU is killed too. It must not talk the protocol (``repl.py`` does).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

from macaron_local.agent.sandbox import SandboxPolicy

TICK_S = 0.05  # while a block runs
IDLE_TICK_S = 0.5  # between blocks
GRACE_S = 1.0  # from the interrupt to the kill
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int) -> float | None:
    """CPU seconds of ``pid`` and its reaped children (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    fields = raw[raw.rindex(b")") + 2 :].split()
    # after "pid (comm) ": state ppid ... utime(11) stime(12) cutime(13) cstime(14)
    return sum(int(x) for x in fields[11:15]) / CLOCK_TICKS


def _children(pids: set[int]) -> set[int]:
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        if int(raw[raw.rindex(b")") + 2 :].split()[1]) in pids:
            found.add(int(name))
    return found


def tree_cpu(pid: int) -> float | None:
    """CPU seconds of ``pid`` and every live descendant (a /proc scan: subprocess mode only)."""
    total = process_cpu(pid)
    if total is None:
        return None
    seen, frontier = {pid}, {pid}
    while frontier:
        frontier = _children(frontier) - seen
        seen |= frontier
        total += sum(process_cpu(p) or 0.0 for p in frontier)
    return total


class Watchdog:
    """Enforces one child's per-block limits; ``begin``/``end`` bracket each block."""

    def __init__(self, pid: int, policy: SandboxPolicy, kill: Callable[[], None]) -> None:
        self.pid, self.policy, self._kill = pid, policy, kill
        self._measure = tree_cpu if policy.subprocess else process_cpu
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._started: float | None = None  # monotonic start of the block in flight
        self._cpu0 = self.cpu()
        self._paused = 0.0
        self._held_at: float | None = None  # since when the host answers a tool call
        self._interrupted_at: float | None = None
        self.reason: str | None = None  # why the block (or the idle child) was stopped
        threading.Thread(target=self._run, daemon=True, name=f"repl-watchdog-{pid}").start()

    def cpu(self) -> float:
        return self._measure(self.pid) or 0.0

    def begin(self) -> None:
        with self._lock:
            self._started, self._cpu0 = time.monotonic(), self.cpu()
            self._paused, self._interrupted_at, self.reason = 0.0, None, None
            self._held_at = None
        self._wake.set()

    def hold(self) -> None:
        """The host is answering a tool call (maybe asking the user): the wall clock stops."""
        with self._lock:
            self._held_at = time.monotonic()

    def release(self) -> None:
        with self._lock:
            if self._held_at is not None:
                self._paused += time.monotonic() - self._held_at
                self._held_at = None

    def end(self) -> str | None:
        """The block is over; returns why it was stopped, if it was."""
        with self._lock:
            reason, self._started = self.reason, None
            self._cpu0, self._interrupted_at = self.cpu(), None
            return reason

    def block_cpu(self) -> float:
        return max(0.0, self.cpu() - self._cpu0)

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(TICK_S if self._started is not None else IDLE_TICK_S)
            self._wake.clear()
            if self._closed:
                return
            cpu = self._measure(self.pid)
            if cpu is None:
                return  # the child is gone
            with self._lock:
                action = self._check(cpu, time.monotonic())
            if action is not None:
                action()

    def _check(self, cpu: float, now: float) -> Callable[[], None] | None:
        used = cpu - self._cpu0
        if self._started is None:
            if used > self.policy.cpu_seconds and self.reason is None:
                self.reason = (
                    f"code left running after its block used more than "
                    f"{self.policy.cpu_seconds:g}s of CPU between blocks"
                )
                return self._kill
            return None
        if self._interrupted_at is not None:
            return self._kill if now - self._interrupted_at > GRACE_S else None
        held = now - self._held_at if self._held_at is not None else 0.0
        wall = now - self._started - self._paused - held
        if used > self.policy.cpu_seconds:
            self.reason = f"the block used more than {self.policy.cpu_seconds:g}s of CPU"
        elif wall > self.policy.wall_seconds:
            self.reason = f"the block ran longer than {self.policy.wall_seconds:g}s"
        else:
            return None
        self._interrupted_at = now
        return self._interrupt

    def _interrupt(self) -> None:
        try:
            os.kill(self.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass
