"""Escape attempts against the REPL sandbox: each is blocked or killed, the host goes on."""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy


@pytest.fixture
def repl(policy: SandboxPolicy):
    with Repl(policy) as r:
        yield r


def _blocked(output: str) -> bool:
    return output.startswith("PermissionError: sandbox:")


def test_child_runs_in_the_os_sandbox(repl: Repl) -> None:
    assert repl.isolation == "bubblewrap"
    assert repl.pid != os.getpid()


def test_reading_ssh_keys_in_home_is_blocked(tmp_path: Path, policy: SandboxPolicy) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("SECRET KEY")
    with Repl(replace(policy, home=str(home))) as repl:
        for code in (
            f"open({str(key)!r}).read()",
            f"import os; os.listdir({str(home / '.ssh')!r})",
            f"import pathlib; pathlib.Path({str(key)!r}).read_text()",
            f"import os; os.symlink({str(key)!r}, 'k'); open('k').read()",
            "open('../home/.ssh/id_ed25519').read()",
        ):
            res = repl.run(code)
            assert res.status == "error" and _blocked(res.output), code
            assert "SECRET" not in res.output


def test_writing_outside_the_workspace_is_blocked(repl: Repl, tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    for code in (
        f"open({str(target)!r}, 'w').write('x')",
        "open('../outside.txt', 'a')",
        f"import os; os.rename('a', {str(target)!r})",
        f"import shutil; shutil.rmtree({str(tmp_path)!r})",
    ):
        res = repl.run(code)
        assert _blocked(res.output), code
    assert not target.exists()
    assert repl.run("open('inside.txt', 'w').write('ok')").output == "2"
    assert (Path(repl.policy.workspace) / "inside.txt").read_text() == "ok"


def test_fork_bomb_is_blocked(repl: Repl) -> None:
    res = repl.run("import os\nwhile True:\n    os.fork()")
    assert _blocked(res.output) and "os.fork" in res.output
    for code in (
        "import subprocess",
        "import os; os.system('echo hi')",
        "import os; os.execv('/bin/sh', ['sh'])",
        "import multiprocessing",
    ):
        assert _blocked(repl.run(code).output), code
    assert repl.run("1 + 1").output == "2"


def test_memory_bomb_raises_memory_error(repl: Repl) -> None:
    repl.run("keep = 42")
    res = repl.run("blob = bytearray(2 * 1024 ** 3)")
    assert res.output == "MemoryError"
    assert repl.run("keep").output == "42"  # the child survived with its namespace


def test_endless_loop_is_stopped_by_the_cpu_limit_and_the_namespace_survives(
    policy: SandboxPolicy,
) -> None:
    with Repl(replace(policy, cpu_seconds=1.0, wall_seconds=60.0)) as repl:
        repl.run("x = 5")
        first = repl.pid
        res = repl.run("while True:\n    pass")
        assert res.status == "timeout" and not res.restarted
        assert "more than 1s of CPU" in res.output and "variables are kept" in res.output
        assert repl.pid == first
        assert repl.run("x").output == "5"


def test_wall_clock_limit_stops_a_sleeping_block(policy: SandboxPolicy) -> None:
    with Repl(replace(policy, wall_seconds=1.0)) as repl:
        repl.run("x = 5")
        res = repl.run("import time\ntime.sleep(120)")
        assert res.status == "timeout" and not res.restarted
        assert res.output.startswith("TimeoutError: the block ran longer than 1s")
        assert repl.run("x").output == "5"


def test_socket_to_localhost_never_connects(repl: Repl) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    t = threading.Thread(target=accept)
    t.start()
    res = repl.run(f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), 2)")
    t.join()
    server.close()
    assert _blocked(res.output)
    assert accepted == []


def test_host_tampering_through_signals_and_ctypes_is_blocked(repl: Repl) -> None:
    host = os.getpid()
    for code in (
        "import os; os.kill(os.getppid(), 9)",
        f"import os; os.kill({host}, 9)",
        "import os; os.killpg(0, 9)",
        "import signal; signal.pthread_kill(1, 9)",
        "import ctypes",
        "import importlib; importlib.import_module('_ctypes')",
        "import importlib; importlib.import_module('_posixsubprocess')",
        "import resource; resource.setrlimit(resource.RLIMIT_CPU, (-1, -1))",
        "import gc; gc.get_objects()",
    ):
        res = repl.run(code)
        assert _blocked(res.output), code
    assert repl.run("'still here'").output == "'still here'"


def test_oversized_file_write_fails(policy: SandboxPolicy) -> None:
    with Repl(replace(policy, file_size_mb=1)) as repl:
        res = repl.run("f = open('big.bin', 'wb')\nf.write(b'x' * (3 * 1024 * 1024))\nf.flush()")
        assert res.status == "error" and "File too large" in res.output
