"""The tools L1 was trained to call exist, with those names and signatures (issue 24 item 3).

Every assistant step of ``models/data/agent.jsonl`` is parsed with the agent loop's own parser;
every call of a tool module in it must name a tool the bundled plugins register, with
arguments that bind to that tool's real signature. Then every episode's blocks run, in order,
in the real sandboxed REPL against the real bundled tools in a fresh temporary home: a block
may hit a missing file or id there (the recorded world is not rebuilt; files it names exist,
with two placeholder lines, so a key read from a file's content may be missing too), but never
a name, an attribute, an argument or a result key the real tools do not have. The shell is
declined.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from macaron_local.agent.agent_loop import extract_block
from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolContext, ToolGate, ToolRegistry

DATA = Path(__file__).resolve().parents[2] / "models" / "data" / "agent.jsonl"
# what the recorded world may lack in a fresh home (or, for a reminder, a clock the test's is
# past: each episode has its own day and hour); anything else is an API mismatch
ALLOWED_ERROR = re.compile(
    r"^(FileNotFoundError|NotADirectoryError|IsADirectoryError|KeyError: \d+|"
    r"PermissionError: the user declined|ValueError: [\dT:-]+ has already passed)"
)
ERROR_LINE = re.compile(r"^([A-Za-z]*(Error|Exception)\b.*)$", re.M)


def episodes() -> list[list[dict[str, str]]]:
    return [json.loads(line)["messages"] for line in DATA.read_text().splitlines() if line]


def steps(messages: list[dict[str, str]]) -> Iterator[tuple[str, str, str]]:
    """``(kind, body, recorded result)`` of each assistant step, as the agent loop parses it."""
    for m, result in zip(messages[:-1], messages[1:], strict=True):
        if m["role"] == "assistant":
            block = extract_block(m["content"])
            assert block is not None, f"an assistant step with no block: {m['content']!r}"
            assert result["role"] == "tool", f"a step with no tool result: {m['content']!r}"
            yield (*block, result["content"])


def tool_calls(code: str, modules: set[str]) -> Iterator[tuple[str, ast.Call | None]]:
    """``(module.function, call node)`` for every use of a tool module (None: not called)."""
    tree = ast.parse(code)
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if isinstance(func.value, ast.Name) and func.value.id in modules:
                called.add(id(func))
                yield f"{func.value.id}.{func.attr}", node
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in modules and id(node) not in called:
                yield f"{node.value.id}.{node.attr}", None


def binds(registry: ToolRegistry, name: str, call: ast.Call) -> str | None:
    """Why ``call`` does not bind to the real tool's signature (None: it does)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None  # *args / **kwargs: checked when the block runs
    sig = inspect.signature(registry.tools[name].func)
    try:
        sig.bind(*call.args, **{str(k.arg): k.value for k in call.keywords})
    except TypeError as exc:
        return str(exc)
    return None


def test_every_training_call_parses_and_names_a_registered_tool(
    bundled_registry: ToolRegistry,
) -> None:
    modules = {spec.module for spec in bundled_registry.tools.values()}
    problems, seen = [], 0
    for n, messages in enumerate(episodes(), start=1):
        assert extract_block(messages[-1]["content"]) is None, f"episode {n} ends in a block"
        for kind, body, _ in steps(messages):
            assert kind == "repl" or isinstance(json.loads(body)["tool"], str)
            for name, call in tool_calls(body, modules) if kind == "repl" else ():
                seen += 1
                if name not in bundled_registry.tools:
                    problems.append(f"episode {n}: {name} is not a registered tool")
                elif call is not None and (why := binds(bundled_registry, name, call)):
                    problems.append(f"episode {n}: {name}: {why}")
    assert seen > 300 and not problems, "\n".join(problems)


def _setup_world(workspace: Path, code: str) -> None:
    """Folders for the files a block names, so a read is not just a FileNotFoundError."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "files" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    _touch(workspace, node.func.attr, arg.value)


def _touch(workspace: Path, function: str, rel: str) -> None:
    path = (workspace / rel).resolve()
    if not path.is_relative_to(workspace.resolve()) or rel in (".", ""):
        return
    if function == "list":
        path.mkdir(parents=True, exist_ok=True)
    elif function in ("read", "move") and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("line one\nline two\n")


@pytest.mark.parametrize("chunk", range(4))
def test_every_training_episode_runs_against_the_bundled_tools(
    chunk: int, tmp_path: Path, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    all_eps = episodes()
    problems: list[str] = []
    for n in range(chunk, len(all_eps), 4):
        messages = all_eps[n]
        home = tmp_path / f"e{n}"
        ws, data = home / "workspace", home / "data"
        ws.mkdir(parents=True)
        ctx = ToolContext(workspace=ws, data_dir=data, clock=context.clock)
        decline = lambda tool, args: tool != "shell.run"  # noqa: E731 - never run the shell
        gate = ToolGate(bundled_registry, allow=["*"], context=ctx, confirm=decline)
        with Repl(SandboxPolicy(workspace=str(ws), wall_seconds=20.0), gate) as repl:
            read_files = False
            for kind, body, recorded in steps(messages):
                if kind != "repl":
                    continue
                expected = _last_error(recorded)  # an episode that shows a failure
                if expected is None:
                    _setup_world(ws, body)
                read_files = read_files or "files.read(" in body
                res = repl.run(body)
                if expected is not None:
                    if _last_error(res.output) != expected:
                        problems.append(f"episode {n + 1}: recorded {expected!r}, real "
                                        f"{res.status}: {res.output.strip()[-200:]!r}")  # fmt: skip
                    continue
                problems += _mismatch(n + 1, body, res.status, res.output, read_files)
    assert not problems, "\n".join(problems)


def _last_error(output: str) -> str | None:
    errors = [m.group(1).strip() for m in ERROR_LINE.finditer(output)]
    return errors[-1] if errors else None


def _mismatch(n: int, body: str, status: str, output: str, read_files: bool) -> list[str]:
    if status == "ok":
        return []
    last = _last_error(output) or output.strip()[-200:]
    if status == "error" and ALLOWED_ERROR.match(last):
        return []
    if (
        status == "error"
        and read_files
        and last.startswith(("KeyError", "ValueError", "IndexError"))
    ):
        return []  # a column or a number of the placeholder file's content
    return [f"episode {n}: {status}: {last}\n  in: {body[:200]!r}"]


def test_the_data_builds_tool_table_is_the_registered_api(
    bundled_registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``models/data/repl_doc.py`` checks the data against its own (stdlib-only) copy of the
    tool API: that copy must be the bundled plugins' API, name for name, parameter for
    parameter, or the build would pass data the tools reject."""
    monkeypatch.syspath_prepend(str(DATA.parent))
    import repl_doc

    real: dict[str, dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {}
    for spec in bundled_registry.tools.values():
        params = inspect.signature(spec.func).parameters.values()
        names = tuple(p.name for p in params)
        optional = frozenset(p.name for p in params if p.default is not inspect.Parameter.empty)
        real.setdefault(spec.module, {})[spec.function] = (names, optional)
    # toolsmith's tools are registered by each agent session (AgentSession adds them to the
    # registry it is given), so whether the shared fixture holds them depends on test order
    per_session = {"toolsmith"}
    expected = {k: v for k, v in repl_doc.TOOLS.items() if k not in per_session}
    assert expected == {k: v for k, v in real.items() if k not in per_session}
