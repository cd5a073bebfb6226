"""The host side of a session's REPL: one sandboxed child process with a persistent namespace.

Owns the child's life (start, per-step CPU budget, wall-clock kill of its process group,
restart after a crash), the JSON-lines protocol, and answering the child's tool calls through a
:class:`~macaron_local.agent.tools.ToolGate`. It must not decide what a tool may do (the gate
does) nor parse model output (``loop.py`` does).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from macaron_local.agent import sandbox
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolGate, error_reply
from macaron_local.errors import MacaronError

LOST = "the REPL was restarted and every variable was lost"
STARTUP_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ReplResult:
    """What one block produced, as the model will read it (``output``), plus how it ended.

    ``status``: ``ok``, ``error`` (an exception in the block), ``timeout`` (wall clock) or
    ``crashed`` (the child died: CPU or memory limit, killed). After ``timeout`` and
    ``crashed`` the child was restarted (``restarted``) and its namespace is gone.
    """

    output: str
    status: str
    restarted: bool = False
    truncated: bool = False
    seconds: float = 0.0
    value: Any = None


@dataclass(frozen=True)
class PromotedSource:
    name: str
    source: str


class _Child:
    """One running child: the process, a reader thread and the queue of its messages."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.cpu_used = 0.0
        assert proc.stdout is not None
        threading.Thread(
            target=self._read, args=(proc.stdout,), daemon=True, name=f"repl-reader-{proc.pid}"
        ).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                self.inbox.put(json.loads(line))
            except ValueError:
                continue  # not protocol; ignore
        self.inbox.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg, default=repr) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


class Repl:
    """A session's sandboxed REPL. Not thread-safe for concurrent ``run`` calls (locked)."""

    def __init__(
        self,
        policy: SandboxPolicy,
        gate: ToolGate | None = None,
        *,
        promoted: Callable[[], list[PromotedSource]] | None = None,
        on_tool_failed: Callable[[str, str], None] | None = None,
    ) -> None:
        self.policy = policy
        self.gate = gate
        self._promoted = promoted
        self._on_tool_failed = on_tool_failed
        self._child: _Child | None = None
        self._lock = threading.RLock()
        self.isolation = ""
        self.restarts = 0
        self.startup_failures: list[dict[str, str]] = []

    # --- life ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the child if it is not running (``run`` does this on demand)."""
        with self._lock:
            if self._child is None or self._child.proc.poll() is not None:
                self._child = self._spawn()

    def restart(self) -> None:
        with self._lock:
            self._stop()
            self.restarts += 1
            self._child = self._spawn()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def __enter__(self) -> Repl:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._child.proc.pid if self._child else None

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    def _spawn(self) -> _Child:
        os.makedirs(self.policy.workspace, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": self.policy.workspace,
            "PYTHONHASHSEED": "0",
        }
        prefix = () if self.policy.network else sandbox.netns_prefix()
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-I", "-m", "macaron_local.agent.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            bufsize=1,
            cwd=self.policy.workspace,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        child = _Child(proc)
        isolation = "none" if self.policy.network else sandbox.isolation_name(prefix)
        child.send(
            {
                "op": "init",
                "policy": self.policy.to_dict(),
                "isolation": isolation,
                "tools": self.gate.namespace() if self.gate else {},
                "promoted": [p.__dict__ for p in (self._promoted() if self._promoted else [])],
            }
        )
        try:
            ready = child.inbox.get(timeout=STARTUP_TIMEOUT_S)
        except queue.Empty:
            ready = None
        if not ready or ready.get("op") != "ready":
            child.kill()
            raise MacaronError(
                "the REPL child did not start",
                hint="check that `python -m macaron_local.agent.child` runs",
            )
        self.isolation = ready["isolation"]
        self.startup_failures = ready.get("failed", [])
        for failure in self.startup_failures:
            self._report_failure(failure["name"], failure["error"])
        return child

    # --- running code ----------------------------------------------------------------------

    def run(self, code: str) -> ReplResult:
        """Execute one block; values it binds stay for the next block."""
        return self._request({"op": "exec", "code": code})

    def eval_json(self, expr: str) -> ReplResult:
        """Evaluate ``expr``; ``value`` is its JSON-able value (used to validate tools)."""
        return self._request({"op": "eval_json", "code": expr})

    def _request(self, msg: dict[str, Any]) -> ReplResult:
        with self._lock:
            self.start()
            child = self._child
            assert child is not None
            started = time.monotonic()
            sandbox.set_step_cpu_limit(child.proc.pid, child.cpu_used, self.policy.cpu_seconds)
            try:
                child.send(msg)
            except (BrokenPipeError, OSError):
                return self._crashed(child, started)
            return self._wait(child, started)

    def _wait(self, child: _Child, started: float) -> ReplResult:
        deadline = started + self.policy.wall_seconds
        while True:
            try:
                msg = child.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return self._timed_out(child, started)
            if msg is None:
                return self._crashed(child, started)
            if msg.get("op") == "call":
                t0 = time.monotonic()
                self._answer(child, msg)
                deadline += time.monotonic() - t0  # time spent in the host (confirmations)
            elif msg.get("op") == "tool_failed":
                self._report_failure(msg["name"], msg["error"])
            elif msg.get("op") == "done":
                child.cpu_used = float(msg.get("cpu", child.cpu_used))
                return ReplResult(
                    msg["output"],
                    msg["status"],
                    truncated=msg["truncated"],
                    seconds=time.monotonic() - started,
                    value=msg.get("value"),
                )

    def _answer(self, child: _Child, msg: dict[str, Any]) -> None:
        if self.gate is None:
            reply = error_reply(NameError(f"no tools in this REPL ({msg.get('tool')})"))
        else:
            reply = self.gate.answer(
                msg.get("tool", ""), msg.get("args", []), msg.get("kwargs", {})
            )
        try:
            child.send(reply)
        except (BrokenPipeError, OSError):
            pass

    def _report_failure(self, name: str, error: str) -> None:
        if self._on_tool_failed is not None:
            self._on_tool_failed(name, error)

    def _timed_out(self, child: _Child, started: float) -> ReplResult:
        self._replace(child)
        text = (
            f"TimeoutError: the block ran longer than {self.policy.wall_seconds:g}s "
            f"and was stopped; {LOST}"
        )
        return ReplResult(text, "timeout", restarted=True, seconds=time.monotonic() - started)

    def _crashed(self, child: _Child, started: float) -> ReplResult:
        child.proc.wait()
        code = child.proc.returncode
        self._replace(child)
        return ReplResult(
            f"{_death_cause(code, self.policy)}; {LOST}",
            "crashed",
            restarted=True,
            seconds=time.monotonic() - started,
        )

    def _replace(self, child: _Child) -> None:
        child.kill()
        self._child = None
        self.restarts += 1
        self._child = self._spawn()


def _death_cause(code: int | None, policy: SandboxPolicy) -> str:
    if code == -signal.SIGXCPU or code == -signal.SIGKILL:
        return (
            f"RuntimeError: the REPL process was killed (CPU limit of "
            f"{policy.cpu_seconds:g}s per block, or memory limit of {policy.memory_mb} MB)"
        )
    if code is not None and code < 0:
        return f"RuntimeError: the REPL process was killed by {signal.Signals(-code).name}"
    return f"RuntimeError: the REPL process exited (status {code})"
