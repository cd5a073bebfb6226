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


INSTALLED = [
    "clock.now", "files.read", "notes.add", "reminders.add", "reminders.list", "shell.run",
    "todos.add", "units.convert",
]  # fmt: skip


def test_made_up_weather_after_a_tool_that_does_not_exist_is_replaced(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    request = "what's the weather in Boston today?"
    gate = ToolGate(bundled_registry, allow=["*"], auto_approve=["*"], context=context)
    with Repl(policy, gate) as repl:
        made_up = "Today's weather in Boston is 78.6°F."
        step = scripted('```repl\nweather.forecast("Boston")\n```', made_up)
        out = run_agent(step, [{"role": "user", "content": request}], repl, gate)
    assert [c.status for c in out.calls] == ["error"] and "NameError" in out.calls[0].result
    tools = [s.name for s in gate.visible()]
    text, why = truthful(out.text, out.calls, request=request, tools=tools)
    assert why and "78.6" not in text
    assert "weather tool" in text and "no such tool is installed" in text
    assert "weather plugin" in text.lower() and "reminders" in text  # what is installed
    assert "NameError: name 'weather' is not defined" in text  # what was tried


def test_a_claim_with_no_tool_says_which_tool_and_plugin_it_needs() -> None:
    text, why = truthful("Pizza ordered! It will arrive in 30 minutes.", [],
                         request="order me a large pepperoni pizza", tools=INSTALLED)  # fmt: skip
    assert why == "claimed an action, but no tool call succeeded"
    assert "ordered" not in text.lower() and "30 minutes" not in text
    assert "shopping or delivery tool" in text and "delivery-service plugin" in text
    assert "clock, files, notes, reminders, shell, todos and units" in text
    assert text.endswith("Nothing was looked up or changed.")


def test_live_data_with_no_tool_behind_it_is_made_up() -> None:
    for answer in ("It's 18 degrees and sunny in Boston right now.", "AAPL is trading at $187.20.",
                   "Your flight UA 212 is on time and departs at 9:40."):  # fmt: skip
        text, why = truthful(answer, [], request="check it for me", tools=INSTALLED)
        assert why == "reported live data, but no tool call succeeded", answer
        assert not any(ch.isdigit() for ch in text), text
    kept = "The boiling point of water is 100 degrees Celsius at sea level, if you mean that?"
    assert truthful(kept, [], request="how hot does water boil", tools=INSTALLED) == (kept, None)


def test_an_honest_decline_is_kept_and_told_which_plugin_would_help() -> None:
    request = "turn off the living room lights"
    said = "Sorry, I can't control your lights from here."
    text, why = truthful(said, [], request=request, tools=INSTALLED)
    assert text.startswith(said) and "smart-home or media-player plugin" in text and why
    full = "I can't: no smart-home tool is installed; a smart-home plugin would add one."
    assert truthful(full, [], request=request, tools=INSTALLED) == (full, None)


def test_a_failed_reminder_is_not_blamed_on_a_missing_tool(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    claim = "Reminder set: call mom at 17:00."
    out = _run(policy, bundled_registry, context, "```repl\nreminders.add('call mom')\n```", claim)
    tools = bundled_registry.names()
    text, why = truthful(out.text, out.calls, request=ASK[0]["content"], tools=tools)
    assert why and "Reminder set" not in text
    assert "messaging" not in text and "plugin" not in text  # reminders are installed
    assert "missing 1 required positional argument" in text or "missing a required" in text


def test_a_missing_function_names_the_ones_the_module_has(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    out = _run(policy, bundled_registry, context, '```repl\nreminders.search("mom")\n```', "ok")
    assert "its tools are: reminders.add, reminders.list" in out.calls[0].result


def test_an_unfinished_tool_block_is_not_an_answer() -> None:
    cut = '```repl\ntext = """Your sister is running late. She\'s 20 minutes away'
    text, why = truthful(cut, [], request="text my sister that I'm running late", tools=INSTALLED)
    assert why == "the answer was an unfinished tool block" and "```" not in text
    assert "messaging tool" in text and "cut off" in text and "Nothing was" in text


def test_a_claim_backed_only_by_reading_tools_is_corrected(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    acting = [s.name for s in bundled_registry.tools.values() if s.side_effect]
    asked = _run(
        policy, bundled_registry, context, "```repl\ntodos.list()\n```", "Todo 4711 marked done."
    )
    text, why = truthful(asked.text, asked.calls, request="mark todo 4711 done", acting=acting)
    assert why and "marked" not in text and "I found nothing: `todos.list()` returned []" in text
    block = "```repl\nclock.now()\n```"
    said = _run(policy, bundled_registry, context, block, "It is 10:30. Todo 3 marked done.")
    text, why = truthful(said.text, said.calls, request="what time is it", acting=acting)
    assert why and text.endswith("nothing was changed.)")  # not asked to act: the claim is noted
    block, said = "```repl\ntodos.add('buy oat milk')\n```", "Added 'buy oat milk' to your todos."
    wrote = _run(policy, bundled_registry, context, block, said)
    assert truthful(wrote.text, wrote.calls, acting=acting) == (wrote.text, None)


def test_made_up_numbers_and_empty_results_are_not_reported() -> None:
    class Failed:
        step, code, status = 0, 'clock.days_until(f"{2026}-12-25}")', "error"
        result = "SyntaxError: f-string: single '}' is not allowed"

    text, why = truthful("2026 is 15 days past the specified date.", [Failed()],
                         request="how many days until 2026-12-25?", tools=INSTALLED)  # fmt: skip
    assert why == "reported numbers no tool call returned" and "15" not in text

    class Empty:
        step, code, status, result = 0, 'notes.search("title")', "ok", "[]"

    said = 'Your todo list is: "Add a new task", "Call Sam".'
    text, why = truthful(said, [Empty()], request="what's on my todo list?", tools=INSTALLED,
                         acting=["todos.add"])  # fmt: skip
    assert why == "reported data, but every tool call returned nothing" and "Call Sam" not in text
    honest = "You have no todos right now."
    assert truthful(honest, [Empty()], request="my todos?", acting=["todos.add"]) == (honest, None)
    # a "no" inside the made-up items is no admission (seen through the real runtime, issue 24)
    said = 'Your todo list is: "open", "done" (due 10:30), "unread" (no due date).'
    text, why = truthful(said, [Empty()], request="what's on my todo list right now?",
                         tools=INSTALLED, acting=["todos.add"])  # fmt: skip
    assert why == "reported data, but every tool call returned nothing" and "unread" not in text
    assert text.startswith("I found nothing: `notes.search(") and text.endswith(
        "Nothing was changed."
    )


def test_an_order_is_not_backed_by_a_note() -> None:
    class Note:
        step, code, status = 0, 'notes.add("Order two bags of dog food")', "ok"
        result = "{'id': 2, 'text': 'Order two bags of dog food'}"

    text, why = truthful("Two bags of dog food were ordered.", [Note()],
                         request="order two bags of dog food from chewy", tools=INSTALLED,
                         acting=["notes.add"])  # fmt: skip
    assert why and "were ordered" not in text and "shopping or delivery tool" in text
    assert "That call's change stands" in text


def test_a_clock_call_does_not_back_a_forecast(
    policy: SandboxPolicy, bundled_registry: ToolRegistry, context: ToolContext
) -> None:
    out = _run(policy, bundled_registry, context, "```repl\nclock.now()\n```", "It's 18°C in Oslo.")
    acting = [s.name for s in bundled_registry.tools.values() if s.side_effect]
    tools = bundled_registry.names()
    text, why = truthful(
        out.text, out.calls, request="weather in oslo?", tools=tools, acting=acting
    )
    assert why and "18" not in text and "weather tool" in text and "clock.now()" in text


def test_an_answer_beside_the_point_is_told_which_tool_is_missing() -> None:
    class Call:
        step, code, result, status = 0, 'clock.days_until("2023-12-08")', "-1090", "ok"

    said = "Boston is 1090 miles away from New York City."
    text, why = truthful(said, [Call()], request="what's the weather in Boston today?",
                         tools=INSTALLED, acting=["todos.add"])  # fmt: skip
    assert text.startswith(said) and "which is not installed; a weather plugin" in text and why


def test_a_converted_reading_is_not_taken_for_a_missing_device_tool() -> None:
    class Call:
        step, code, result, status = 0, "units.convert(64, 'F', 'C')", "17.7778", "ok"

    said = "64 °F is about 17.8 °C, so the cabin thermostat is set to 17.8 °C."
    request = "the cabin thermostat says 64 F, what is that in celsius?"
    acting = ["todos.add"]
    text, _ = truthful(said, [Call()], request=request, tools=INSTALLED, acting=acting)
    assert text.startswith(said) and "smart-home" not in text  # kept; "is set" gets the note
    plain = "64 °F is about 17.8 °C."
    assert truthful(plain, [Call()], request=request, tools=INSTALLED, acting=acting) == (
        plain,
        None,
    )
