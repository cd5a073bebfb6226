"""The operating-system boundary around the REPL child: what starts it, and whether it can.

Owns the command line that starts the child inside a kernel sandbox, built before any model code
runs and out of that code's reach:

- Linux: bubblewrap with new user, mount, PID, network, IPC, UTS and cgroup namespaces, every
  capability dropped, ``no_new_privs``, no further user namespaces, a new session, death with
  the host; a root made of the Python runtime and system libraries read-only, the session
  workspace the only writable folder, its own ``/proc``, a private ``/tmp``, a cleared
  environment; plus the seccomp filter of :mod:`macaron_local.agent.seccomp`.
- macOS: ``sandbox-exec`` with a profile of the same shape (UNTESTED: no macOS machine here).
- ``prlimit`` in front of either: address space, file size, core dumps and open files are
  limited by the host before the sandbox's first instruction, so the child cannot raise them.

:func:`status` says whether such a sandbox can start here (probed once) and, when it cannot,
why and how to fix it: the REPL is then off. The in-process mode (``[repl] isolation =
"in-process"``, security-relevant) is the weaker opt-in: the child runs as the user, confined by
the rlimits, a network namespace where ``unshare`` works, and the audit hook only.

Host side only; the child never imports this module.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from macaron_local import paths
from macaron_local.agent.sandbox import MIB, SandboxPolicy

SANDBOX_UID = 65534  # "nobody" inside the user namespace
NAMESPACES = (
    "--unshare-all --unshare-user --disable-userns --cap-drop ALL --die-with-parent "
    "--new-session --as-pid-1 --hostname repl"
)
ENV_PATH = "/usr/local/bin:/usr/bin:/bin"
# the only files of macaron_local the child runs (bound read-only at their own paths)
CHILD_FILES = ("__init__.py", "agent/__init__.py", "agent/child.py", "agent/sandbox.py")
PROBE_TIMEOUT_S = 15.0
MAX_OPEN_FILES = 256


@dataclass(frozen=True)
class Status:
    """Whether the REPL's OS sandbox can start on this machine."""

    available: bool
    kind: str  # bubblewrap | sandbox-exec | none
    detail: str  # what works, or why it does not
    fix: str | None = None


def package_root() -> Path:
    """The folder that holds the ``macaron_local`` package (the child's only import path)."""
    return Path(__file__).resolve().parents[2]


def interpreter() -> str:
    """The real Python binary (not the venv's link): the child needs the standard library only."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def child_command(root: Path | None = None) -> list[str]:
    """``python -I -S -c ...``: isolated, no site-packages, imports only the child's modules."""
    lib = str(root or package_root())
    boot = (
        f"import sys; sys.path.insert(0, {lib!r}); "
        "from macaron_local.agent.child import main; main()"
    )
    return [interpreter(), "-I", "-S", "-c", boot]


def limits_prefix(policy: SandboxPolicy) -> list[str]:
    """``prlimit`` with the hard limits of ``policy`` (empty where prlimit is missing)."""
    tool = shutil.which("prlimit")
    if tool is None:
        return []
    mem, fsize = policy.memory_mb * MIB, policy.file_size_mb * MIB
    return [
        tool,
        f"--as={mem}:{mem}",
        f"--fsize={fsize}:{fsize}",
        "--core=0:0",
        f"--nofile={MAX_OPEN_FILES}:{MAX_OPEN_FILES}",
        "--",
    ]


# --- Linux: bubblewrap ---------------------------------------------------------------------


def _runtime_binds() -> list[str]:
    """Read-only binds of the system and the Python runtime the child needs."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/", top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for etc in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", etc, etc]
    for runtime in sorted(_python_paths()):
        if not runtime.startswith("/usr/"):
            args += ["--ro-bind", runtime, runtime]
    root = package_root()
    for name in CHILD_FILES:
        file = str(root / "macaron_local" / name)
        args += ["--ro-bind", file, file]
    return args


def _python_paths() -> set[str]:
    found = {interpreter()}
    found |= {os.path.realpath(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")}
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        lib = sysconfig.get_config_var("LDLIBRARY") or ""
        if libdir and lib and os.path.exists(os.path.join(libdir, lib)):
            found.add(os.path.realpath(os.path.join(libdir, lib)))
    return found


def _app_dirs() -> list[str]:
    """The app's own folders: never visible in the sandbox, even under a bound home."""
    return [os.path.realpath(p) for p in (paths.config_dir(), paths.data_dir(), paths.cache_dir())]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _filesystem_binds(policy: SandboxPolicy) -> list[str]:
    """The writable part: the workspace (and the home, minus the app's folders, if asked)."""
    if policy.filesystem == "none":
        return ["--chdir", "/"]
    ws = os.path.realpath(policy.workspace)
    args: list[str] = []
    writable = [ws]
    if policy.filesystem == "home" and policy.home:
        home = os.path.realpath(policy.home)
        args += ["--bind", home, home]
        writable.append(home)
        for hidden in _app_dirs():
            if any(_inside(hidden, w) for w in writable) and not _inside(ws, hidden):
                args += ["--tmpfs", hidden]
    args += ["--bind", ws, ws, "--chdir", ws]
    return args


def bwrap_command(
    policy: SandboxPolicy,
    *,
    seccomp_fd: int,
    info_fd: int | None = None,
    command: list[str] | None = None,
) -> list[str]:
    """The full bubblewrap command line for one REPL child."""
    tool = shutil.which("bwrap")
    if tool is None:
        raise FileNotFoundError("bwrap")
    home = policy.workspace if policy.filesystem != "none" else "/"
    env = {
        "PATH": ENV_PATH,
        "LANG": "C.UTF-8",
        "HOME": home,
        "TMPDIR": "/tmp",
        "PYTHONHASHSEED": "0",
    }
    args = [tool, *NAMESPACES.split(), "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    if policy.network:
        args.append("--share-net")
    args.append("--clearenv")
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += "--proc /proc --dev /dev --tmpfs /tmp".split()
    args += [*_runtime_binds(), *_filesystem_binds(policy), "--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    return [*args, "--", *(command or child_command())]


# --- macOS: sandbox-exec (UNTESTED here: no macOS machine in this project's CI) -------------


def seatbelt_profile(policy: SandboxPolicy) -> str:
    """A Seatbelt profile of the same shape as the bubblewrap sandbox. UNTESTED."""

    def q(path: str) -> str:
        return '"' + os.path.realpath(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    reads = sorted(_python_paths() | {str(package_root() / "macaron_local")})
    rules = [
        "(version 1)",
        "(deny default)",
        "(allow process-fork)" if policy.subprocess else "",
        f"(allow process-exec (literal {q(interpreter())}))",
        "(allow sysctl-read)",
        "(allow file-read-metadata)",
        '(allow file-read* (subpath "/usr/lib") (subpath "/System") (subpath "/usr/share"))',
        *(f"(allow file-read* (subpath {q(p)}))" for p in reads),
        '(allow file-read* file-write* (literal "/dev/null") (literal "/dev/urandom"))',
    ]
    if policy.filesystem != "none":
        rules.append(f"(allow file-read* file-write* (subpath {q(policy.workspace)}))")
    if policy.network:
        rules.append("(allow network*)")
    return "\n".join(r for r in rules if r)


def seatbelt_command(policy: SandboxPolicy) -> list[str]:
    """``sandbox-exec -p PROFILE python ...`` (UNTESTED)."""
    return ["/usr/bin/sandbox-exec", "-p", seatbelt_profile(policy), *child_command()]


# --- starting the child ----------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    """A started child: the process the host holds, the pid of its Python, how it is confined."""

    proc: subprocess.Popen[str]
    pid: int  # the child's Python as the host sees it (kill it and the sandbox is gone)
    isolation: str  # bubblewrap | sandbox-exec | in-process+netns | in-process
    limits_set: bool  # the host set the rlimits before exec (prlimit)


def _popen(cmd: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[str]:
    # nothing reaches the child but its stdin/stdout (the channel) and the fds bwrap consumes
    return subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        bufsize=1,
        env={"PATH": ENV_PATH, "LANG": "C.UTF-8"},
        start_new_session=True,
        close_fds=True,
        pass_fds=pass_fds,
    )


def start(policy: SandboxPolicy) -> Started:
    """Start one REPL child confined as ``policy`` says (raises OSError if it cannot start)."""
    limits = limits_prefix(policy)
    if policy.isolation == "in-process":
        prefix = () if policy.network else netns_prefix()
        proc = _popen([*limits, *prefix, *child_command()])
        kind = "in-process+netns" if prefix else "in-process"
        return Started(proc, proc.pid, kind, bool(limits))
    found = status()
    if not found.available:
        raise OSError(found.detail)
    if found.kind == "sandbox-exec":  # UNTESTED
        proc = _popen([*limits, *seatbelt_command(policy)])
        return Started(proc, proc.pid, found.kind, bool(limits))
    return _start_bwrap(policy, limits)


def _start_bwrap(policy: SandboxPolicy, limits: list[str]) -> Started:
    from macaron_local.agent import seccomp

    filter_fd = seccomp.filter_fd(subprocess=policy.subprocess)
    info_r, info_w = os.pipe()
    try:
        cmd = bwrap_command(policy, seccomp_fd=filter_fd, info_fd=info_w)
        proc = _popen([*limits, *cmd], pass_fds=(filter_fd, info_w))
    finally:
        _close(filter_fd)
        _close(info_w)
    with os.fdopen(info_r, "rb") as info:
        raw = info.read()  # bwrap writes {"child-pid": N} and closes; EOF if it failed
    try:
        pid = int(json.loads(raw)["child-pid"])
    except (ValueError, KeyError, TypeError):
        proc.kill()
        proc.wait()
        raise OSError(f"bubblewrap exited with status {proc.returncode}") from None
    return Started(proc, pid, "bubblewrap", bool(limits))


@functools.cache
def netns_prefix() -> tuple[str, ...]:
    """In-process mode: the prefix that starts the child in a new network namespace, if any."""
    tool = shutil.which("unshare")
    if tool is None:
        return ()
    for prefix in ((tool, "--net", "--"), (tool, "--user", "--map-root-user", "--net", "--")):
        try:
            probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return prefix
    return ()


# --- can it start here? --------------------------------------------------------------------


@functools.cache
def status() -> Status:
    """Probe once per process whether the REPL's OS sandbox starts on this machine."""
    if sys.platform == "darwin":
        if os.path.exists("/usr/bin/sandbox-exec"):
            return Status(True, "sandbox-exec", "sandbox-exec (macOS Seatbelt; untested build)")
        return Status(False, "none", "sandbox-exec is missing", "reinstall macOS command tools")
    if not sys.platform.startswith("linux"):
        return Status(
            False,
            "none",
            f"no OS sandbox for {sys.platform}",
            "run macaron-local on Linux (bubblewrap) or macOS (sandbox-exec)",
        )
    if shutil.which("bwrap") is None:
        return Status(
            False, "none", "bubblewrap (bwrap) is not installed", "sudo apt-get install bubblewrap"
        )
    from macaron_local.agent import seccomp

    try:
        seccomp.compile_filter(subprocess=False)
    except seccomp.SeccompUnavailable as exc:
        return Status(False, "none", f"no seccomp filter: {exc}", seccomp.FIX)
    return _probe_bwrap()


def _probe_bwrap() -> Status:
    from macaron_local.agent import seccomp

    probe = SandboxPolicy(workspace="/", filesystem="none")
    filter_fd = seccomp.filter_fd(subprocess=False)
    try:
        done = subprocess.run(
            bwrap_command(probe, seccomp_fd=filter_fd, command=[interpreter(), "-c", ""]),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            pass_fds=(filter_fd,),
            env={"PATH": ENV_PATH},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Status(False, "none", f"bubblewrap did not start: {exc}", USERNS_FIX)
    finally:
        _close(filter_fd)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Status(False, "none", f"bubblewrap cannot create the sandbox: {why}", USERNS_FIX)
    return Status(True, "bubblewrap", _describe())


USERNS_FIX = (
    "allow unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1, or "
    "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or in a container run it with "
    "--security-opt seccomp=unconfined / --cap-add SYS_ADMIN"
)


def _describe() -> str:
    return (
        "bubblewrap: user/mount/PID/network/IPC/UTS namespaces, no capabilities, seccomp, "
        "read-only runtime, workspace-only writes"
    )


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
