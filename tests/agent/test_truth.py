"""An agent answer never reports an action the record contradicts (real REPL, real tools).

The model's text is scripted (a real model cannot be made to lie on cue); the tools, their
failures, the REPL sandbox and the gate are the real ones.
"""

from __future__ import annotations

from typing import Any

from macaron_local.agent.agent_loop import run_agent
from macaron_local.agent.repl import Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolContext, ToolGate, ToolRegistry
from macaron_local.agent.truth import NOTHING_RAN, truthful
from macaron_local.engine import Sampling
from macaron_local.turns.act import act

ASK = [{"role": "user", "content": "set a reminder for today 17:00: call mom"}]


def scripted(*outputs: str):
    it = iter(outputs)
    return lambda messages: next(it)


def _run(policy: SandboxPolicy, registry: ToolRegistry, context: ToolContext, *outputs: str):
    gate = ToolGate(registry, allow=["*"], auto_approve=["*"], context=context)
    with Repl(policy, gate) as repl:
        return run_agent(scripted(*outputs), ASK, repl, gate, max_steps=4)


def test_a_claim_after_a_failed_call_is_replaced_by_what_failed(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    out = _run(
        policy,
        bundled_registry,
        context,
        '```repl\nreminders.search("mom")\n```',  # no such function: AttributeError
        "Today's call mom is set to 17:00.",
    )
    assert [c.status for c in out.calls] == ["error"]
    text, why = truthful(out.text, out.calls)
    assert why and "is set" not in text
    assert text.startswith("I could not do that.") and "AttributeError" in text


def test_wrong_arguments_and_a_tool_that_does_not_exist(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    out = _run(
        policy,
        bundled_registry,
        context,
        "```repl\nreminders.add('call mom')\n```",  # 'at' is missing: TypeError
        '```call\n{"tool": "pizza.order", "args": {"size": "L"}}\n```',  # not a tool
        "Pizza ordered and the reminder is added.",
    )
    assert [c.status for c in out.calls] == ["error", "error"]
    text, why = truthful(out.text, out.calls)
    assert why and "ordered" not in text and "pizza.order" in text


def test_a_claim_with_no_tool_call_says_nothing_ran() -> None:
    assert truthful("Pizza ordered.", []) == (NOTHING_RAN, truthful("Pizza ordered.", [])[1])
    assert truthful("Pizza ordered.", [])[1]


def test_honest_answers_and_real_successes_are_kept(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    out = _run(
        policy,
        bundled_registry,
        context,
        "```repl\nreminders.add('call mom', at='2025-03-14 17:00')\n```",
        "Reminder set for 17:00: call mom.",
    )
    assert [c.status for c in out.calls] == ["ok"]
    assert truthful(out.text, out.calls) == ("Reminder set for 17:00: call mom.", None)
    assert truthful("What time should I set it for?", []) == (
        "What time should I set it for?",
        None,
    )
    admitted = "Sorry, I could not set it: AttributeError."
    failed = out.calls[:0] + [type(out.calls[0])(0, "x.y()", "AttributeError: no y", "error")]
    assert truthful(admitted, failed) == (admitted, None)


class ScriptedModelAgent:
    """The session's agent with the model's text scripted (same ``run`` as AgentSession)."""

    def __init__(self, repl: Repl, gate: ToolGate, *outputs: str) -> None:
        self.repl, self.gate, self.outputs = repl, gate, outputs

    def run(self, step: Any, messages: list[dict[str, str]], *, max_steps: int) -> Any:
        return run_agent(
            scripted(*self.outputs), messages, self.repl, self.gate, max_steps=max_steps
        )


def test_the_answer_hop_commits_the_checked_answer(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    gate = ToolGate(bundled_registry, allow=["*"], auto_approve=["*"], context=context)
    with Repl(policy, gate) as repl:
        agent = ScriptedModelAgent(repl, gate, '```repl\nreminders.search("mom")\n```', "Done!")
        acted = act(
            None,  # type: ignore[arg-type] - the scripted agent never asks the model
            agent,
            ASK,
            label="L1",
            adapter=None,
            slot="s",
            max_tokens=32,
            sampling=Sampling(),
            on_text=None,
            cancel=None,
        )
    assert acted.rewritten and "Done!" not in acted.completion.text
    assert "AttributeError" in acted.completion.text
    assert [c.status for c in acted.tool_calls] == ["error"]
