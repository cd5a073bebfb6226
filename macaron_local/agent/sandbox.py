"""The REPL's policy and its second layer, the audit guard; imported by the child.

Owns the :class:`SandboxPolicy` (built from the profile's ``[repl]`` section), the limits the
child sets on itself where the host could not (no ``prlimit``), and the audit hook that gives
clear ``PermissionError: sandbox: ...`` messages for file access outside the workspace,
subprocesses, signals, ctypes and sockets.

The audit hook is NOT the boundary: it runs in the interpreter it confines, and code there can
disarm it. The boundary is the operating system's (``boundary.py``: bubblewrap namespaces, no
capabilities, seccomp, rlimits set before exec; per-block CPU and wall time measured and
enforced by the host, ``watchdog.py``). The hook only makes ordinary mistakes read well.

This module is imported by the child process, so it must stay standard-library only and do
nothing at import time. It must not run tools or talk to the host (``child.py`` does).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from macaron_local.hcp.schema import Repl as ReplSection

MIB = 1024 * 1024

Filesystem = Literal["none", "workspace", "home"]
Isolation = Literal["os", "in-process"]


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything the child needs to confine itself; plain data so it crosses the pipe as JSON."""

    workspace: str
    filesystem: Filesystem = "workspace"
    network: bool = False
    subprocess: bool = False
    cpu_seconds: float = 10.0
    wall_seconds: float = 30.0
    memory_mb: int = 512
    output_chars: int = 8000
    file_size_mb: int = 64
    home: str = ""
    # "os": the kernel sandbox (boundary.py), or no REPL where it cannot start; "in-process":
    # the weaker opt-in (rlimits, a network namespace, the audit hook), security-relevant
    isolation: Isolation = "os"
    audit_hook: bool = True  # the second layer; off only to check the OS boundary alone

    @classmethod
    def from_profile(cls, repl: ReplSection, workspace: Path, **overrides: Any) -> SandboxPolicy:
        """The policy for a profile's ``[repl]`` section, rooted at ``workspace``."""
        lim = repl.limits
        values: dict[str, Any] = dict(
            workspace=str(workspace),
            filesystem=repl.filesystem,
            network=repl.network,
            subprocess=repl.subprocess,
            cpu_seconds=lim.cpu_seconds,
            wall_seconds=lim.wall_seconds,
            memory_mb=lim.memory_mb,
            output_chars=lim.output_chars,
            home=str(Path.home()),
            isolation=repl.isolation or "os",
        )
        values.update(overrides)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- set up in the child, before user code ---------------------------------------------------


def apply_limits(policy: SandboxPolicy, *, set_by_host: bool) -> None:
    """The child's own limits: only where the host could not set them before exec (no prlimit).

    An oversized write always raises ``OSError`` instead of killing the child (SIGXFSZ ignored).
    """
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if set_by_host:
        return
    mem, fsize = policy.memory_mb * MIB, policy.file_size_mb * MIB
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


# --- the audit guard -------------------------------------------------------------------------

ALWAYS_BLOCKED = frozenset(
    {
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "resource.setrlimit",
        "resource.prlimit",
        "gc.get_referrers",
        "gc.get_referents",
        "gc.get_objects",
        "sys.settrace",
        "webbrowser.open",
        "os.startfile",
        "syslog.openlog",
    }
)
SUBPROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "pty.spawn",
    }
)
NETWORK_PREFIXES = (
    "socket.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "imaplib.",
    "poplib.",
    "telnetlib.",
    "nntplib.",
)
BLOCKED_IMPORTS = frozenset({"ctypes", "_ctypes", "cffi", "_xxsubinterpreters"})
SUBPROCESS_IMPORTS = frozenset({"_posixsubprocess", "pty", "multiprocessing"})
# (event, indexes of path arguments, writes?)
PATH_EVENTS: dict[str, tuple[tuple[int, ...], bool]] = {
    "os.listdir": ((0,), False),
    "os.scandir": ((0,), False),
    "os.chdir": ((0,), False),
    "os.listxattr": ((0,), False),
    "os.getxattr": ((0,), False),
    "os.mkdir": ((0,), True),
    "os.rmdir": ((0,), True),
    "os.remove": ((0,), True),
    "os.rename": ((0, 1), True),
    "os.link": ((0, 1), True),
    "os.symlink": ((0, 1), True),
    "os.truncate": ((0,), True),
    "os.chmod": ((0,), True),
    "os.chown": ((0,), True),
    "os.utime": ((0,), True),
    "os.chflags": ((0,), True),
    "os.setxattr": ((0,), True),
    "os.removexattr": ((0,), True),
    "os.mkfifo": ((0,), True),
    "os.mknod": ((0,), True),
    "shutil.copyfile": ((0, 1), True),
    "shutil.copytree": ((0, 1), True),
    "shutil.rmtree": ((0,), True),
    "shutil.move": ((0, 1), True),
    "shutil.copymode": ((0, 1), True),
    "shutil.copystat": ((0, 1), True),
    "shutil.make_archive": ((0,), True),
    "shutil.unpack_archive": ((0, 1), True),
}
READ_ONLY_FILES = frozenset({"/dev/null", "/dev/urandom", "/dev/random", "/dev/zero"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def python_roots() -> tuple[str, ...]:
    """Folders the child may read so that ``import`` of the standard library keeps working."""
    found = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    found |= {"/usr/share/zoneinfo"}
    return tuple(sorted({os.path.realpath(p) for p in found}))


def _roots(policy: SandboxPolicy) -> tuple[tuple[str, ...], tuple[str, ...]]:
    writable: tuple[str, ...] = ()
    if policy.filesystem != "none":
        writable = (os.path.realpath(policy.workspace),)
    if policy.filesystem == "home" and policy.home:
        writable += (os.path.realpath(policy.home),)
    return writable, writable + python_roots()


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _resolve(raw: Any) -> str | None:
    if raw is None:
        raw = "."
    if isinstance(raw, int):
        return None  # an fd the child already holds
    try:
        text = os.fsdecode(os.fspath(raw))
    except TypeError:
        return None
    return os.path.realpath(text)


def make_guard(policy: SandboxPolicy) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook for ``policy``; every value it closes over is immutable."""
    writable, readable = _roots(policy)
    blocked = ALWAYS_BLOCKED | (frozenset() if policy.subprocess else SUBPROCESS_EVENTS)
    blocked_imports = BLOCKED_IMPORTS | (frozenset() if policy.subprocess else SUBPROCESS_IMPORTS)
    no_network = not policy.network

    def deny(what: str) -> None:
        raise PermissionError(f"sandbox: {what} is not allowed")

    def check_path(raw: Any, write: bool, event: str) -> None:
        path = _resolve(raw)
        if path is None:
            return
        if not write and path in READ_ONLY_FILES:
            return
        if not _inside(path, writable if write else readable):
            deny(f"{event} on {path!r} (outside the workspace)")

    def guard(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            write = (
                any(c in mode for c in "wax+")
                if isinstance(mode, str)
                else bool((flags or 0) & WRITE_FLAGS)
            )
            check_path(path, write, "open")
        elif event in PATH_EVENTS:
            idx, write = PATH_EVENTS[event]
            for i in idx:
                if i < len(args):
                    check_path(args[i], write, event)
        elif event in blocked:
            deny(event)
        elif event == "import" and args and str(args[0]).split(".")[0] in blocked_imports:
            deny(f"import {args[0]}")
        elif event.startswith("ctypes."):
            deny(event)
        elif (
            event in ("object.__setattr__", "object.__delattr__")
            and len(args) > 1
            and args[1] in ("__code__", "__closure__", "__globals__")
        ):
            deny(f"changing {args[1]}")
        elif no_network and event.startswith(NETWORK_PREFIXES):
            deny(f"network access ({event})")

    return guard


def install_guard(policy: SandboxPolicy) -> None:
    """chdir to the workspace, then (unless the policy turns it off) add the audit hook."""
    if policy.filesystem != "none":
        os.chdir(policy.workspace)
        os.environ["HOME"] = policy.workspace
    else:
        os.chdir("/")
    sys.dont_write_bytecode = True
    if policy.audit_hook:
        sys.addaudithook(make_guard(policy))
