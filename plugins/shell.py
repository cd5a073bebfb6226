"""Bundled plugin: ``shell.run`` — a shell command in the workspace, always confirmed first.

The gate asks the user before every call (``always_confirm``), whatever the profile
auto-approves. The command runs on the host with the workspace as its folder and a timeout;
it is not sandboxed beyond that, which is why it always asks.
"""

from __future__ import annotations

import subprocess
from typing import Any

from macaron_local.agent.tools import tool_context
from macaron_local.plugins import hookimpl

TIMEOUT_S = 60.0
MAX_OUT = 20_000


def shell_run(cmd: str) -> dict[str, Any]:
    """Run ``cmd`` in the workspace; returns {'rc': int, 'out': stdout and stderr together}."""
    ws = tool_context().workspace
    ws.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            str(cmd),
            shell=True,
            cwd=ws,
            capture_output=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT_S,
            text=True,
            errors="replace",
        )
    except subprocess.TimeoutExpired as exc:
        raise TimeoutError(f"the command ran longer than {TIMEOUT_S:g}s") from exc
    return {"rc": done.returncode, "out": done.stdout[-MAX_OUT:]}


@hookimpl
def register_tools(register: Any) -> None:
    register.module("shell", "run a shell command (always asks the user first)")
    register(shell_run, name="shell.run", side_effect=True, always_confirm=True)
