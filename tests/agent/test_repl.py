"""The REPL as the model sees it: persistence, result format, truncation, restart, tools."""

from __future__ import annotations

from pathlib import Path

from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolContext, ToolGate, ToolRegistry


def test_values_stay_bound_and_results_read_like_a_repl(policy: SandboxPolicy) -> None:
    with Repl(policy) as repl:
        assert repl.run("x = 40").output == ""
        assert repl.run("print('hi')\nx + 2").output == "hi\n42"
        assert repl.run("def f(a):\n    return a * x\nf(2)").output == "80"
        assert repl.run("None").output == ""
        res = repl.run("print('before')\n1 / 0")
        assert res.status == "error"
        assert res.output == "before\nZeroDivisionError: division by zero"
        assert repl.run("{'a': [1, 2]}").output == "{'a': [1, 2]}"


def test_long_output_is_truncated_to_the_budget(policy: SandboxPolicy) -> None:
    with Repl(policy) as repl:
        res = repl.run("for i in range(5000):\n    print(i)")
        assert res.truncated and res.output.endswith("… [truncated]")
        assert len(res.output) <= policy.output_chars + len("\n… [truncated]")


def test_a_dead_child_is_restarted_and_says_the_namespace_was_lost(policy: SandboxPolicy) -> None:
    with Repl(policy) as repl:
        repl.run("important = 1")
        res = repl.run("import os\nos._exit(3)")
        assert res.status == "crashed" and res.restarted
        assert "every variable was lost" in res.output
        assert repl.run("important").output.startswith("NameError")
        assert repl.restarts == 1


def test_tools_cross_to_the_host_and_results_stay_bound(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    gate = ToolGate(bundled_registry, allow=["*"], auto_approve=["todos.*"], context=context)
    with Repl(policy, gate) as repl:
        out = repl.run(
            "t = todos.add('Write report', due='2025-03-10', estimate_h=2.5)\nt['status'], t['due']"
        ).output
        assert out == "('open', '2025-03-10')"
        out = repl.run(
            "overdue = todos.list(status='overdue')\nsum(t['estimate_h'] or 0 for t in overdue)"
        ).output
        assert out == "2.5"
        assert repl.run("todos.done(999)").output == "KeyError: 999"
        assert repl.run("units.convert(72, 'F', 'C')").output == "22.2222"
        assert repl.run("clock.now()").output == "'2025-03-14T10:30:00'"
    assert Path(context.data_dir, "personal.db").exists()


def test_allowlist_hides_and_refuses_tools(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    gate = ToolGate(bundled_registry, allow=["notes.search", "clock.*"], context=context)
    assert sorted(gate.namespace()) == ["clock", "notes"]
    with Repl(policy, gate) as repl:
        assert repl.run("todos.list()").output == "NameError: name 'todos' is not defined"
        assert repl.run("notes.add").output.startswith("AttributeError")
        assert repl.run("notes.search('')").output == "[]"
    try:
        gate.call("todos.list")
    except PermissionError as exc:
        assert "not available" in str(exc)
    else:
        raise AssertionError("todos.list passed the allowlist")


def test_confirmation_gate(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    asked: list[tuple[str, dict]] = []

    def no(tool: str, args: dict) -> bool:
        asked.append((tool, args))
        return False

    gate = ToolGate(
        bundled_registry, allow=["*"], confirm=no, auto_approve=["notes.*"], context=context
    )
    with Repl(policy, gate) as repl:
        out = repl.run("todos.add('Buy milk')").output
        assert out == "PermissionError: the user declined to run: todos.add('Buy milk')"
        assert repl.run("len(todos.list())").output == "0"  # nothing happened
        assert repl.run("notes.add('auto-approved')['text']").output == "'auto-approved'"
        out = repl.run("shell.run('echo hi > pwned.txt')").output
        assert out == "PermissionError: the user declined to run: echo hi > pwned.txt"
    assert [t for t, _ in asked] == ["todos.add", "shell.run"]
    assert asked[1][1] == {"cmd": "echo hi > pwned.txt"}
    assert not (Path(context.workspace) / "pwned.txt").exists()


def test_shell_asks_even_when_everything_is_auto_approved(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    asked: list[str] = []
    gate = ToolGate(
        bundled_registry,
        allow=["*"],
        auto_approve=["*"],
        context=context,
        confirm=lambda tool, args: asked.append(tool) or True,
    )
    with Repl(policy, gate) as repl:
        assert repl.run("shell.run('echo hi')").output == "{'rc': 0, 'out': 'hi\\n'}"
    assert asked == ["shell.run"]


def test_a_hanging_tool_times_out_without_blocking_the_repl(policy: SandboxPolicy) -> None:
    import threading

    from macaron_local.agent.tools import ToolSpec

    stop = threading.Event()
    reg = ToolRegistry()
    reg.add(ToolSpec("slow.wait", lambda: stop.wait(60), plugin="slow"))
    gate = ToolGate(reg, allow=["*"], timeout_s=0.5)
    with Repl(policy, gate) as repl:
        out = repl.run("slow.wait()").output
        assert out.startswith("TimeoutError: tool slow.wait (plugin slow) did not answer")
        assert repl.run("2 * 21").output == "42"
    stop.set()
