"""The "L1 REPL format" (docs/formats.md) as the data build sees it.

Owns: the tool API table (the bundled plugins' names and parameters, a stdlib-only copy that
tests/agent/test_training_calls.py holds equal to the registered tools), parsing an agent seed
record into chat messages, and checking every repl block (compiles, calls only known tools
with known parameters). It must not execute tool code. Stdlib only.
"""

from __future__ import annotations

import ast
from typing import Any

from sources import Record

# module -> function -> (positional parameter names in order, names that have defaults)
TOOLS: dict[str, dict[str, tuple[tuple[str, ...], frozenset[str]]]] = {
    "notes": {
        "add": (("text", "tags"), frozenset({"tags"})),
        "search": (("query",), frozenset({"query"})),
    },
    "todos": {
        "add": (("title", "due", "estimate_h"), frozenset({"due", "estimate_h"})),
        "list": (("status",), frozenset({"status"})),
        "done": (("id",), frozenset()),
    },
    "reminders": {
        "add": (("text", "at"), frozenset()),
        "list": ((), frozenset()),
    },
    "files": {
        "list": (("path",), frozenset({"path"})),
        "read": (("path",), frozenset()),
        "write": (("path", "text"), frozenset()),
        "move": (("src", "dst"), frozenset()),
    },
    "clock": {
        "now": ((), frozenset()),
        "days_until": (("date",), frozenset()),
    },
    "units": {"convert": (("value", "from_unit", "to_unit"), frozenset())},
    "shell": {"run": (("cmd",), frozenset())},
}
TODO_STATUS = {"open", "done", "overdue"}
FENCE_OPEN, FENCE_CLOSE, TOOL_PREFIX = "```repl", "```", "=> "


class EpisodeError(ValueError):
    """An agent seed record that breaks the REPL format."""


def _check_call(call: ast.Call, where: str) -> None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return
    module, name = func.value.id, func.attr
    if module not in TOOLS:
        return
    if name not in TOOLS[module]:
        raise EpisodeError(f"{where}: unknown tool {module}.{name}")
    params, optional = TOOLS[module][name]
    if len(call.args) > len(params):
        raise EpisodeError(f"{where}: too many arguments to {module}.{name}")
    given = set(params[: len(call.args)])
    for kw in call.keywords:
        if kw.arg not in params or kw.arg in given:
            raise EpisodeError(f"{where}: bad keyword {kw.arg!r} for {module}.{name}")
        given.add(kw.arg)
    missing = set(params) - optional - given
    if missing:
        raise EpisodeError(f"{where}: {module}.{name} missing {sorted(missing)}")
    status = next((kw.value for kw in call.keywords if kw.arg == "status"), None)
    if name == "list" and module == "todos" and call.args:
        status = call.args[0]
    if isinstance(status, ast.Constant) and status.value not in TODO_STATUS:
        raise EpisodeError(f"{where}: todos.list status {status.value!r}")


def check_code(code: str, where: str) -> int:
    """Compile a repl block and check its tool calls; returns how many tool calls it makes."""
    try:
        tree = ast.parse(code)
        compile(tree, where, "exec")
    except SyntaxError as exc:
        raise EpisodeError(f"{where}: repl block does not compile: {exc}") from exc
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for call in calls:
        _check_call(call, where)
    return sum(
        1
        for c in calls
        if isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id in TOOLS
    )


def parse_episode(rec: Record) -> tuple[list[dict[str, str]], int]:
    """Turn a seed record into messages; returns (messages, number of tool calls)."""
    where = rec.where()
    messages: list[dict[str, Any]] = [{"role": "user", "content": rec.request}]
    code: list[str] | None = None
    tool: list[str] = []
    final: list[str] = []
    calls = 0

    def flush_tool() -> None:
        if tool:
            messages.append({"role": "tool", "content": "\n".join(tool)})
            tool.clear()

    for line in rec.body:
        if code is not None:
            if line == FENCE_CLOSE:
                text = "\n".join(code).strip("\n")
                calls += check_code(text, where)
                messages.append({"role": "assistant", "content": f"{FENCE_OPEN}\n{text}\n```"})
                code = None
            else:
                code.append(line)
        elif line == FENCE_OPEN:
            if final and "".join(final).strip():
                raise EpisodeError(f"{where}: text before a repl block")
            flush_tool()
            code = []
        elif line.startswith(TOOL_PREFIX) or line == "=>":
            tool.append(line[3:])
        elif line.strip() or final:
            flush_tool()
            final.append(line)
    if code is not None:
        raise EpisodeError(f"{where}: unclosed repl block")
    flush_tool()
    text = "\n".join(final).strip()
    if not text or "```" in text:
        raise EpisodeError(f"{where}: episode must end with a plain-text answer")
    messages.append({"role": "assistant", "content": text})
    _check_order(messages, where)
    return messages, calls


def _check_order(messages: list[dict[str, str]], where: str) -> None:
    roles = [m["role"] for m in messages]
    for i, role in enumerate(roles[1:-1], start=1):
        if role == "assistant" and roles[i + 1] != "tool":
            raise EpisodeError(f"{where}: a repl block must be followed by its tool result")
        if role == "tool" and roles[i + 1] != "assistant":
            raise EpisodeError(f"{where}: a tool result must be followed by the assistant")


def transcript(messages: list[dict[str, str]]) -> str:
    """The assistant side of an episode as one text (for summary.jsonl's answer field)."""
    parts = []
    for msg in messages[1:]:
        prefix = "[tool] " if msg["role"] == "tool" else ""
        parts.append(prefix + msg["content"])
    return "\n".join(parts)
