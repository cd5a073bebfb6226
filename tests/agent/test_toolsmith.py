"""save_tool / promote_tool: candidates, held-out validation, later sessions, demotion."""

from __future__ import annotations

import pytest

from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolGate, ToolRegistry
from macaron_local.agent.toolsmith import Toolsmith

HOURS = "def to_hours(minutes):\n    return round(minutes / 60, 2)\n"
WRONG = "def to_hours(minutes):\n    return minutes // 60\n"


def _session(policy: SandboxPolicy, smith: Toolsmith) -> Repl:
    reg = ToolRegistry()
    smith.register(reg)
    gate = ToolGate(reg, allow=["*"])
    return Repl(policy, gate, promoted=smith.promoted, on_tool_failed=smith.record_failure)


def test_save_from_the_repl_then_promote_on_held_out_cases(policy: SandboxPolicy) -> None:
    smith = Toolsmith(policy)
    with _session(policy, smith) as repl:
        repl.run(HOURS)
        out = repl.run("save_tool(to_hours, cases=[[[90], 1.5], [[30], 0.5]])").output
        assert out == "{'name': 'to_hours', 'status': 'candidate', 'passed': 2}"
        out = repl.run("promote_tool('to_hours')").output
        assert out == (
            "ValueError: to_hours has no held-out reference cases yet; it stays a candidate"
        )
        smith.add_references("to_hours", [[[45], 0.75], [[100], 1.67], [[0], 0.0]])
        assert repl.run("promote_tool('to_hours')['status']").output == "'promoted'"
    # a later session (a new REPL child) has the promoted tool defined
    with _session(policy, smith) as later:
        assert later.run("to_hours(150)").output == "2.5"
    kinds = [e["event"] for e in smith.events()]
    assert kinds == ["saved", "promoted"]


def test_own_cases_must_pass_to_save(policy: SandboxPolicy) -> None:
    smith = Toolsmith(policy)
    with pytest.raises(ValueError, match="failed its own case"):
        smith.save("to_hours", WRONG, [[[90], 1.5]])
    with pytest.raises(ValueError, match="does not define"):
        smith.save("other", HOURS, [])
    with pytest.raises(ValueError, match="cannot be a tool name"):
        smith.save("save_tool", HOURS, [])
    assert smith.get("to_hours") is None


def test_held_out_failure_blocks_promotion_without_revealing_answers(policy: SandboxPolicy) -> None:
    smith = Toolsmith(policy)
    smith.save("to_hours", WRONG, [[[120], 2]])  # passes its own (easy) case
    smith.add_references("to_hours", [[[90], 1.5], [[120], 2.0]])
    with pytest.raises(ValueError) as err:
        smith.promote("to_hours")
    assert "failed 1 of 2 held-out" in str(err.value) and "1.5" not in str(err.value)
    assert smith.get("to_hours")["status"] == "candidate"
    assert smith.promoted() == []


def test_a_promoted_tool_that_fails_in_use_is_demoted_and_logged(policy: SandboxPolicy) -> None:
    smith = Toolsmith(policy)
    src = "def per_item(total, n):\n    return total / n\n"
    smith.save("per_item", src, [[[10, 2], 5.0]])
    smith.add_references("per_item", [[[9, 3], 3.0]])
    smith.promote("per_item")
    with _session(policy, smith) as repl:
        assert repl.run("per_item(8, 4)").output == "2.0"
        assert repl.run("per_item(1, 0)").output == "ZeroDivisionError: division by zero"
    assert smith.get("per_item")["status"] == "demoted"
    assert smith.events()[-1]["event"] == "demoted"
    assert "ZeroDivisionError" in smith.events()[-1]["reason"]
    with _session(policy, smith) as later:  # no longer defined in new sessions
        assert later.run("per_item").output.startswith("NameError")


def test_revalidate_demotes_when_references_change(policy: SandboxPolicy) -> None:
    smith = Toolsmith(policy)
    smith.save("to_hours", WRONG, [[[120], 2]])
    smith.add_references("to_hours", [[[180], 3]])
    smith.promote("to_hours")
    assert smith.revalidate() == []
    smith.add_references("to_hours", [[[180], 3], [[90], 1.5]])
    assert smith.revalidate() == ["to_hours"]
    assert smith.get("to_hours")["status"] == "demoted"
