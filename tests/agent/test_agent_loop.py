"""run_agent with a scripted step function: REPL blocks, call blocks, limits, the record."""

from __future__ import annotations

from macaron_local.agent.agent_loop import extract_block, run_agent
from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolContext, ToolGate, ToolRegistry, ToolSpec


def scripted(*outputs: str):
    seen: list[list[dict]] = []

    def step(messages: list[dict]) -> str:
        seen.append(messages)
        return outputs[len(seen) - 1]

    return step, seen


def test_extract_block() -> None:
    assert extract_block("```repl\nx = 1\n```") == ("repl", "x = 1")
    assert extract_block('sure\n```call\n{"tool": "a.b"}\n```') == ("call", '{"tool": "a.b"}')
    assert extract_block("```python\nprint(1)\n```") is None
    assert extract_block("All done.") is None


def test_repl_steps_then_final_answer(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    gate = ToolGate(bundled_registry, allow=["*"], auto_approve=["todos.*"], context=context)
    step, seen = scripted(
        "```repl\nt = todos.add('Pay rent', due='2025-03-01', estimate_h=0.5)\nt['id']\n```",
        "```repl\n[x['title'] for x in todos.list(status='overdue')]\n```",
        "Rent is overdue.",
    )
    with Repl(policy, gate) as repl:
        out = run_agent(step, [{"role": "user", "content": "add rent"}], repl, gate, max_steps=5)
    assert out.finished and out.text == "Rent is overdue." and out.round_trips == 3
    assert [c.result for c in out.calls] == ["1", "['Pay rent']"]
    assert [c.status for c in out.calls] == ["ok", "ok"]
    assert seen[2][-1] == {"role": "tool", "content": "['Pay rent']"}
    assert [m["role"] for m in out.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def test_call_blocks_for_observe_before_commit_tools(policy: SandboxPolicy) -> None:
    booked: list[str] = []
    reg = ToolRegistry()
    reg.add(ToolSpec("calendar.free", lambda day: ["09:00", "14:00"], discrete=True))
    reg.add(
        ToolSpec(
            "calendar.book",
            lambda slot: booked.append(slot) or slot,
            discrete=True,
            side_effect=True,
        )
    )
    gate = ToolGate(reg, allow=["*"], confirm=lambda tool, args: args["slot"] == "14:00")
    assert gate.namespace() == {}  # discrete tools are not bound in the REPL
    step, _ = scripted(
        '```call\n{"tool": "calendar.free", "args": {"day": "mon"}}\n```',
        '```call\n{"tool": "calendar.book", "args": {"slot": "09:00"}}\n```',
        '```call\n{"tool": "calendar.book", "args": {"slot": "14:00"}}\n```',
        "Booked 14:00.",
    )
    with Repl(policy, gate) as repl:
        out = run_agent(step, [{"role": "user", "content": "book"}], repl, gate)
    assert [c.status for c in out.calls] == ["ok", "declined", "ok"]
    assert out.calls[0].result == "['09:00', '14:00']" and booked == ["14:00"]
    assert [c.kind for c in out.calls] == ["call", "call", "call"]


def test_max_steps_stops_the_loop(policy: SandboxPolicy) -> None:
    step, seen = scripted(*["```repl\n1\n```"] * 10)
    with Repl(policy) as repl:
        out = run_agent(step, [{"role": "user", "content": "loop"}], repl, None, max_steps=2)
    assert not out.finished and len(out.calls) == 2 and out.round_trips == 3
    assert "stopped after 2 tool steps" in out.text


def test_a_repeated_step_runs_once(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    """The adapter looping on one block (six identical reminders for one request) runs it once."""
    block = '```repl\nreminders.add("Take the bins out", "2025-03-15 08:30")\n```'
    gate = ToolGate(bundled_registry, allow=["*"], auto_approve=["*"], context=context)
    with Repl(policy, gate) as repl:
        msgs = [{"role": "user", "content": "remind me tomorrow at 8:30 to take the bins out"}]
        step, _ = scripted(block, "```repl\nclock.nope()\n```", block, "Set.")
        out = run_agent(step, msgs, repl, gate, max_steps=6)
        listed = repl.run("len(reminders.list())").output
    assert [c.status for c in out.calls] == ["ok", "error"] and listed.strip() == "1"
    assert not out.finished and out.text.startswith("(stopped: the same tool step came again")
    assert "Take the bins out" in out.text  # what it returned, from the record
