"""Escape attempts against the REPL, each on the real sandbox with the audit hook OFF.

The audit hook lives in the interpreter it confines and the attacks of issue 18 disarmed it, so
every attempt here runs as if that had already happened (``audit_hook=False``): what stops it
must be the operating system (namespaces, seccomp, rlimits, the host's watchdog). Each case
checks the host's side (the file, the store, the listener, the process), not only the message.
The ``layer`` of each case is the one the escape table in docs/plugins.md credits.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from macaron_local import paths
from macaron_local.agent.repl import Repl, ReplResult
from macaron_local.agent.sandbox import SandboxPolicy

SECRET = "sk-escape-test-0123456789abcdef"


@dataclass
class Host:
    """What the attacker is after, set up on the host before the REPL starts."""

    store: Path
    plugins: Path
    key: Path
    outside: Path
    host_pid: int
    sibling: subprocess.Popen[bytes]
    port: int
    accepted: list[object]
    store_conn: sqlite3.Connection


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    monkeypatch.setenv("MACARON_REMOTE_API_KEY", SECRET)
    store = paths.db_path()
    store.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE turns (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO turns (text) VALUES ('a private conversation')")
    conn.commit()
    plugins = paths.config_dir() / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    key = tmp_path / "home" / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True)
    key.write_text(SECRET)
    sibling = subprocess.Popen(["sleep", "300"])
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    listener = threading.Thread(target=accept, daemon=True)
    listener.start()
    yield Host(
        store,
        plugins,
        key,
        tmp_path / "outside.txt",
        os.getpid(),
        sibling,
        server.getsockname()[1],
        accepted,
        conn,  # held open: a descriptor a leaky child could inherit
    )
    stop.set()
    listener.join()
    server.close()
    sibling.kill()
    sibling.wait()
    conn.close()


@pytest.fixture
def bare(policy: SandboxPolicy, host: Host) -> Iterator[Repl]:
    """A REPL whose audit hook is off: only the OS boundary is left."""
    with Repl(replace(policy, audit_hook=False, home=str(host.key.parents[1]))) as repl:
        yield repl


def _store_intact(host: Host) -> None:
    with open(host.store, "rb") as fh:
        assert fh.read(16) == b"SQLite format 3\x00"
    rows = sqlite3.connect(host.store).execute("SELECT text FROM turns").fetchall()
    assert rows == [("a private conversation",)]


def _refused(res: ReplResult, *errors: str) -> None:
    assert res.status == "error", res.output
    assert any(e in res.output for e in errors), res.output
    assert SECRET not in res.output


@dataclass(frozen=True)
class Escape:
    name: str
    layer: str
    code: Callable[[Host], str]
    check: Callable[[Host, ReplResult], None]


ESCAPES = [
    Escape(
        "ssh key in the home",
        "mount namespace",
        lambda h: f"print(open({str(h.key)!r}).read())",
        lambda h, r: _refused(r, "FileNotFoundError"),
    ),
    Escape(
        "write outside the workspace",
        "mount namespace",
        lambda h: f"open({str(h.outside)!r}, 'w').write('x')\nopen('/usr/x', 'w')",
        lambda h, r: (_refused(r, "Read-only file system"), _absent(h.outside)),
    ),
    Escape(
        "overwrite the child's own code",
        "mount namespace (read-only bind)",
        lambda h: "import macaron_local.agent.child as c\nopen(c.__file__, 'a').write('#')",
        lambda h, r: _refused(r, "Read-only file system"),
    ),
    Escape(
        "sqlite3.connect on the app store",
        "mount namespace",
        lambda h: (
            f"import sqlite3\nc = sqlite3.connect({str(h.store)!r})\n"
            "print(c.execute('SELECT * FROM turns').fetchall())\n"
            "c.execute('DELETE FROM turns'); c.commit()"
        ),
        lambda h, r: (_refused(r, "OperationalError"), _store_intact(h)),
    ),
    Escape(
        "os.write to leftover descriptors",
        "host: close_fds",
        lambda h: (
            "import os\nfds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
            "for fd in range(3, 1024):\n"
            "    try:\n        os.write(fd, b'\\x00' * 100 + b'\\n')\n"
            "    except OSError:\n        pass\n"
            "len(fds)"
        ),
        lambda h, r: (_store_intact(h), _at_most_fds(r, 6)),
    ),
    Escape(
        "readline history into the plugins folder",
        "mount namespace",
        lambda h: (
            "import readline\nreadline.add_history('import os; os.system(\"id\")')\n"
            f"readline.write_history_file({str(h.plugins / 'evil.py')!r})"
        ),
        lambda h, r: (_refused(r, "Error"), _absent(h.plugins / "evil.py")),
    ),
    Escape(
        "dir_fd walk to / and the host's files",
        "mount namespace",
        lambda h: (
            "import os\nfd = os.open('.', os.O_RDONLY)\nfor _ in range(40):\n"
            "    fd = os.open('..', os.O_RDONLY, dir_fd=fd)\n"
            "print(sorted(os.listdir(fd)))\n"
            "print(sorted(os.listdir(os.open('etc', os.O_RDONLY, dir_fd=fd))))\n"
            f"os.open({str(h.key)[1:]!r}, os.O_RDONLY, dir_fd=fd)"
        ),
        lambda h, r: (_refused(r, "FileNotFoundError"), _no_host_root(r)),
    ),
    Escape(
        "/proc/<ppid>/environ and every environ",
        "PID namespace + cleared environment",
        lambda h: (
            "import os, glob\nprint(os.getppid())\n"
            "for p in glob.glob('/proc/*/environ'):\n    print(open(p).read())\n"
            f"open('/proc/{h.host_pid}/environ').read()"
        ),
        lambda h, r: (_refused(r, "FileNotFoundError"), _no_secret(r)),
    ),
    Escape(
        "os.kill / kill(-1) to the host and a sibling",
        "PID namespace",
        lambda h: (
            "import os\nfor sig in (0, 9):\n    try:\n        os.kill(-1, sig)\n"
            "    except OSError as e:\n        print(e)\n"
            f"os.kill({h.sibling.pid}, 9)"
        ),
        lambda h, r: (_refused(r, "ProcessLookupError"), _alive(h)),
    ),
    Escape(
        "pidfd_send_signal to the host",
        "seccomp + PID namespace",
        lambda h: (
            f"import os, signal\nfd = os.pidfd_open({h.sibling.pid})\n"
            "signal.pidfd_send_signal(fd, 9)"
        ),
        lambda h, r: (_refused(r, "Operation not permitted"), _alive(h)),
    ),
    Escape(
        "fork bomb",
        "seccomp (no new processes)",
        lambda h: "import os\nwhile True:\n    os.fork()",
        lambda h, r: _refused(r, "Operation not permitted"),
    ),
    Escape(
        "subprocess as the user",
        "seccomp (no new processes)",
        lambda h: "import subprocess\nsubprocess.run(['id'])",
        lambda h, r: _refused(r, "Operation not permitted"),
    ),
    Escape(
        "socket to a 127.0.0.1 listener",
        "network namespace",
        lambda h: f"import socket\nsocket.create_connection(('127.0.0.1', {h.port}), 2)",
        lambda h, r: (_refused(r, "Network is unreachable", "refused"), _none_accepted(h)),
    ),
    Escape(
        "ctypes: ptrace, mount, unshare, raise the memory limit",
        "seccomp + no capabilities",
        lambda h: (
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "r = [libc.ptrace(0, 0, 0, 0), libc.mount(b'none', b'/usr', b'tmpfs', 0, None),\n"
            "     libc.unshare(0x10000000), libc.unshare(0x00020000)]\n"
            "print(r, os.strerror(ctypes.get_errno()))\n"
            "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))"
        ),
        lambda h, r: (
            _refused(r, "not allowed to raise maximum limit"),
            _in(r, "[-1, -1, -1, -1] Operation not permitted"),
        ),
    ),
    Escape(
        "symlink out of the workspace",
        "mount namespace",
        lambda h: f"import os\nos.symlink({str(h.key)!r}, 'k')\nopen('k').read()",
        lambda h, r: _refused(r, "FileNotFoundError"),
    ),
    Escape(
        "hard links out of the workspace",
        "mount namespace (EXDEV across mounts)",
        lambda h: (
            "import os\ntry:\n    os.link('/usr/bin/env', 'env')\nexcept OSError as e:\n"
            f"    print(type(e).__name__)\nos.link({str(h.key)!r}, 'k2')"
        ),
        lambda h, r: (_refused(r, "FileNotFoundError"), _in(r, "Error"), _one_link(h)),
    ),
]


def _absent(path: Path) -> None:
    assert not path.exists(), f"{path} was written from the sandbox"


def _alive(h: Host) -> None:
    assert h.sibling.poll() is None, "a host process was killed from the sandbox"


def _none_accepted(h: Host) -> None:
    assert h.accepted == [], "the sandbox reached the host's listener"


def _no_secret(r: ReplResult) -> None:
    assert SECRET not in r.output


def _no_host_root(r: ReplResult) -> None:
    root, etc = (eval(line) for line in r.output.splitlines()[:2])  # two printed lists
    assert not {"home", "var", "opt", "srv", "boot", "mnt"} & set(root), root
    assert set(etc) <= {"ld.so.cache", "localtime"}, etc


def _at_most_fds(r: ReplResult, n: int) -> None:
    assert int(r.output) <= n, r.output  # 0-2, the two channel ends, listdir's own


def _one_link(h: Host) -> None:
    assert h.key.stat().st_nlink == 1


def _in(r: ReplResult, text: str) -> None:
    assert text in r.output, r.output


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.name for e in ESCAPES])
def test_escape_is_blocked_without_the_audit_hook(bare: Repl, host: Host, escape: Escape) -> None:
    res = bare.run(escape.code(host))
    escape.check(host, res)
    assert bare.run("'still here'").output == "'still here'"
