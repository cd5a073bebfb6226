"""The seccomp filter of the REPL sandbox: system calls the namespaces do not cover.

Owns the list of refused calls and compiling it, with libseccomp (through ``pyseccomp``), into
the BPF program bubblewrap loads just before it starts the child. Namespaces already hide the
host's processes, mounts, network and users; this filter refuses what a process with no
capabilities could still reach in the kernel (``ptrace``, ``bpf``, ``keyctl``, ``perf_event_open``,
``io_uring``, ``userfaultfd``, pidfds, new namespaces, mounts, module and kexec loading, terminal
injection) and, unless the profile allows subprocesses, every new process (``fork``, ``vfork``,
``clone`` without ``CLONE_THREAD``; threads stay allowed). Refused calls fail with ``EPERM``.

Syscall numbers come from libseccomp for the machine's architecture (no table here). Host side.
"""

from __future__ import annotations

import errno
import functools
import io
import os
import tempfile
import termios
from typing import Any

FIX = "sudo apt-get install libseccomp2 && pip install pyseccomp"
CLONE_THREAD = 0x00010000  # linux/sched.h: a thread of the caller, not a new process

REFUSED = (
    # debugging and reading other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_open",
    "pidfd_getfd",
    "pidfd_send_signal",
    # kernel attack surface a sandboxed REPL never needs
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "fanotify_init",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "syslog",
    "personality",
    "uselib",
    "iopl",
    "ioperm",
    # namespaces and mounts (bubblewrap set them up; nothing inside may change them)
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # the machine itself
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "vhangup",
)
NEW_PROCESS = ("fork", "vfork")


class SeccompUnavailable(Exception):
    """libseccomp or its Python binding is missing (the REPL's OS sandbox cannot start)."""


def _library() -> Any:
    try:
        import pyseccomp
    except (ImportError, OSError, AttributeError) as exc:
        raise SeccompUnavailable(f"libseccomp is not usable ({exc})") from None
    return pyseccomp


@functools.cache
def compile_filter(*, subprocess: bool) -> bytes:
    """The BPF program (bytes) for a REPL; ``subprocess`` allows new processes."""
    sc = _library()
    refuse = sc.ERRNO(errno.EPERM)
    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in REFUSED:
        _add(sc, flt, refuse, name)
    # glibc falls back to clone() when clone3 is missing; clone's flags can be checked, clone3's
    # (behind a pointer) cannot
    _add(sc, flt, sc.ERRNO(errno.ENOSYS), "clone3")
    _add(sc, flt, refuse, "ioctl", sc.Arg(1, sc.EQ, termios.TIOCSTI))
    if not subprocess:
        for name in NEW_PROCESS:
            _add(sc, flt, refuse, name)
        _add(sc, flt, refuse, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    return _export(flt)


def _add(sc: Any, flt: Any, action: int, name: str, *args: Any) -> None:
    try:
        flt.add_rule(action, name, *args)
    except (OSError, ValueError, RuntimeError):
        pass  # a call this architecture does not have (iopl on arm64, ...)


def _export(flt: Any) -> bytes:
    with tempfile.TemporaryFile() as fh:
        flt.export_bpf(fh)
        fh.seek(0, io.SEEK_SET)
        data = fh.read()
    if not data:
        raise SeccompUnavailable("libseccomp produced an empty filter")
    return data


def filter_fd(*, subprocess: bool) -> int:
    """A readable descriptor holding the compiled filter (bubblewrap's ``--seccomp FD``)."""
    data = compile_filter(subprocess=subprocess)
    read, write = os.pipe()
    try:
        os.write(write, data)  # a few KiB: fits the pipe buffer
    finally:
        os.close(write)
    return read
