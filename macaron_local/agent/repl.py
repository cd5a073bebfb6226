"""The host side of a session's REPL: one sandboxed child process with a persistent namespace.

Owns the child's life (started by ``boundary.py`` inside the OS sandbox, watched by
``watchdog.py``, restarted after a crash), the JSON-lines protocol, and answering the child's
tool calls through a :class:`~macaron_local.agent.tools.ToolGate`. The host trusts nothing the
child says about itself: a block ends only on a "done" that carries that block's random key (a
message without it is forged and the child is replaced), and its CPU and wall time are the
watchdog's measurements. It must not decide what a tool may do (the gate does) nor parse model
output (``loop.py`` does).
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import IO, Any

from macaron_local.agent import boundary
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolGate, error_reply
from macaron_local.agent.watchdog import GRACE_S, Watchdog
from macaron_local.errors import MacaronError

LOST = "the REPL was restarted and every variable was lost"
KEPT = "the REPL's variables are kept"
STARTUP_TIMEOUT_S = 20.0
BACKSTOP_S = 5.0


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
    """One running child: the process, its watchdog, a reader thread and its messages."""

    def __init__(self, started: boundary.Started) -> None:
        self.proc, self.pid, self.isolation = started.proc, started.pid, started.isolation
        self.limits_set = started.limits_set
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.watchdog: Watchdog | None = None
        assert self.proc.stdout is not None
        threading.Thread(
            target=self._read, args=(self.proc.stdout,), daemon=True, name=f"repl-reader-{self.pid}"
        ).start()

    def _read(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue  # not protocol; ignore
                if isinstance(msg, dict):
                    self.inbox.put(msg)
        except (OSError, ValueError):
            pass  # closed under us by kill()
        self.inbox.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg, default=repr) + "\n")
        self.proc.stdin.flush()

    def signal_kill(self) -> None:
        """SIGKILL the child's Python (in a sandbox: its PID 1, so the whole sandbox goes)."""
        for kill, pid in ((os.kill, self.pid), (os.killpg, self.proc.pid)):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        self.signal_kill()
        if self.watchdog is not None:
            self.watchdog.close()
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
        """The child's Python as the host sees it (in a sandbox: its PID 1)."""
        return self._child.pid if self._child else None

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None

    def _spawn(self) -> _Child:
        os.makedirs(self.policy.workspace, exist_ok=True)
        off = unavailable(self.policy)
        if off is not None:
            raise MacaronError(f"the REPL is off: {off.detail}", hint=off.fix)
        try:
            child = _Child(boundary.start(self.policy))
        except OSError as exc:
            raise MacaronError(
                f"the REPL sandbox did not start: {exc}", hint="run `macaron doctor`"
            ) from None
        nonce = secrets.token_hex(16)
        child.send(
            {
                "op": "init",
                "nonce": nonce,
                "policy": self.policy.to_dict(),
                "limits_set": child.limits_set,
                "tools": self.gate.namespace() if self.gate else {},
                "promoted": [p.__dict__ for p in (self._promoted() if self._promoted else [])],
            }
        )
        try:
            ready = child.inbox.get(timeout=STARTUP_TIMEOUT_S)
        except queue.Empty:
            ready = None
        if not ready or ready.get("op") != "ready" or ready.get("nonce") != nonce:
            child.kill()
            raise MacaronError("the REPL child did not start", hint="run `macaron doctor`")
        child.watchdog = Watchdog(child.pid, self.policy, child.signal_kill)
        self.isolation = child.isolation
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
            note = self._stopped_between_blocks()
            self.start()
            child = self._child
            assert child is not None and child.watchdog is not None
            started = time.monotonic()
            nonce = secrets.token_hex(16)  # the block's key: only its own "done" carries it
            child.watchdog.begin()
            try:
                child.send({**msg, "nonce": nonce})
            except (BrokenPipeError, OSError):
                return self._crashed(child, started)
            res = self._wait(child, started, nonce)
            if note:
                res = replace(res, output=f"{note}\n{res.output}".rstrip("\n"), restarted=True)
            return res

    def _stopped_between_blocks(self) -> str | None:
        """A child that died, or spoke, since its last block is replaced; says why."""
        child = self._child
        if child is None:
            return None
        spoke = not child.inbox.empty()
        if child.proc.poll() is None and not spoke:
            return None
        reason = (child.watchdog.reason if child.watchdog else None) or (
            "the REPL sent messages between blocks" if spoke else "the REPL process exited"
        )
        child.kill()
        self._child = None
        self.restarts += 1
        return f"(before this block: {reason}, so it was stopped; {LOST})"

    def _wait(self, child: _Child, started: float, nonce: str) -> ReplResult:
        dog = child.watchdog
        assert dog is not None
        # the watchdog stops the block; this backstop only covers a watchdog that could not
        backstop = started + self.policy.wall_seconds + 2 * GRACE_S + BACKSTOP_S
        while True:
            try:
                msg = child.inbox.get(timeout=max(0.0, backstop - time.monotonic()))
            except queue.Empty:
                child.signal_kill()
                continue
            if msg is None:
                return self._crashed(child, started)
            op = msg.get("op")
            if op == "call":
                t0 = time.monotonic()
                dog.hold()  # time in the host (a confirmation) is not the block's
                try:
                    self._answer(child, msg)
                finally:
                    dog.release()
                backstop += time.monotonic() - t0
            elif op == "tool_failed":
                self._report_failure(str(msg.get("name", "")), str(msg.get("error", "")))
            elif op == "done" and msg.get("nonce") == nonce:
                return self._finished(msg, dog.end(), started)
            else:
                return self._forged(child, started)

    def _finished(self, msg: dict[str, Any], stopped: str | None, started: float) -> ReplResult:
        output, status = str(msg.get("output", "")), str(msg.get("status", "error"))
        if stopped is not None:
            kept = output.removesuffix("KeyboardInterrupt").rstrip("\n")
            status = "timeout"
            output = f"{kept}\nTimeoutError: {stopped} and was stopped; {KEPT}".lstrip("\n")
        return ReplResult(
            output,
            status,
            truncated=bool(msg.get("truncated")),
            seconds=time.monotonic() - started,
            value=msg.get("value") if stopped is None else None,
        )

    def _answer(self, child: _Child, msg: dict[str, Any]) -> None:
        if self.gate is None:
            reply = error_reply(NameError(f"no tools in this REPL ({msg.get('tool')})"))
        else:
            reply = self.gate.answer(
                str(msg.get("tool", "")), msg.get("args") or [], msg.get("kwargs") or {}
            )
        try:
            child.send(reply)
        except (BrokenPipeError, OSError):
            pass

    def _report_failure(self, name: str, error: str) -> None:
        if self._on_tool_failed is not None:
            self._on_tool_failed(name, error)

    def _forged(self, child: _Child, started: float) -> ReplResult:
        self._replace(child)
        text = f"RuntimeError: the REPL sent a message this block did not (forged); {LOST}"
        return ReplResult(text, "crashed", restarted=True, seconds=time.monotonic() - started)

    def _crashed(self, child: _Child, started: float) -> ReplResult:
        child.proc.wait()
        code = child.proc.returncode
        stopped = child.watchdog.reason if child.watchdog else None
        self._replace(child)
        cause = (
            f"RuntimeError: {stopped}; it did not stop when interrupted and was killed"
            if stopped
            else _death_cause(code, self.policy)
        )
        return ReplResult(
            f"{cause}; {LOST}", "crashed", restarted=True, seconds=time.monotonic() - started
        )

    def _replace(self, child: _Child) -> None:
        child.kill()
        self._child = None
        self.restarts += 1
        self._child = self._spawn()


def unavailable(policy: SandboxPolicy) -> boundary.Status | None:
    """Why a REPL with ``policy`` cannot start here (None: it can)."""
    if policy.isolation == "in-process":
        return None
    found = boundary.status()
    return None if found.available else found


def _death_cause(code: int | None, policy: SandboxPolicy) -> str:
    if code == -signal.SIGKILL:
        return (
            f"RuntimeError: the REPL process was killed (memory limit of {policy.memory_mb} MB, "
            "or by the system)"
        )
    if code is not None and code < 0:
        return f"RuntimeError: the REPL process was killed by {signal.Signals(-code).name}"
    return f"RuntimeError: the REPL process exited (status {code})"
