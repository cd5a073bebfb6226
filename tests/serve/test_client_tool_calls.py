"""Reading the model's call of a client tool, checking its arguments, the call grammar (checked
by llama.cpp's own parser) and the approval header: the parts that need no server."""

from __future__ import annotations

import json

import pytest

from macaron_local.engine.grammar import validate_gbnf
from macaron_local.errors import GrammarError
from macaron_local.serve.approvals import BadApproval, approver
from macaron_local.serve.client_tools import (
    CallProblem,
    ClientTool,
    call_block,
    call_grammar,
    check_args,
    read_call,
)

WEATHER = ClientTool(
    name="get_weather",
    description="The weather.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)
PING = ClientTool(name="ping")
TOOLS = (WEATHER, PING)


def block(kind: str, body: str) -> str:
    return f"Let me check.\n```{kind}\n{body}\n```"


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        (call_block("get_weather", {"city": "Paris"}), "get_weather", {"city": "Paris"}),
        (block("call", '{"tool": "ping"}'), "ping", {}),
        (block("repl", 'get_weather("Oslo", days=2)'), "get_weather", {"city": "Oslo", "days": 2}),
        (block("repl", 'w = get_weather(city="Oslo")'), "get_weather", {"city": "Oslo"}),
        (block("repl", "print(ping())"), "ping", {}),
    ],
)
def test_a_call_is_read_from_either_block(text: str, name: str, args: dict) -> None:
    call = read_call(text, TOOLS)
    assert call is not None and (call.name, call.args) == (name, args)
    assert call.id.startswith("call_") and json.loads(call.arguments) == args


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (block("call", '{"tool": "get_wether", "args": {}}'), "there is no tool 'get_wether'"),
        (block("call", '{"tool": "get_weather", "args": {}}'), "missing required city"),
        (
            block("call", '{"tool": "get_weather", "args": {"city": 3}}'),
            "args.city: expected string",
        ),
        (block("call", '{"tool": "get_weather", "args": {"city": "a", "x": 1}}'), "unknown x"),
        (block("call", '{"tool": "get_weather", "args": {"city": "a", "days": true}}'), "integer"),
        (block("call", '{"tool": "get_weather", "args": ["Paris"]}'), "JSON object"),
        (block("call", '{"tool": "get_weather"'), "a call block is"),
        (block("repl", "import os\nos.listdir()"), "there is no REPL here"),
        (block("repl", "get_weather(open('x'))"), "literal values"),
        (block("repl", 'get_weather("a", 1, 2)'), "positional arguments"),
        ('```call\n{"tool": "get_weather", "args": {"ci', "not closed"),
    ],
)
def test_a_malformed_call_is_a_clear_problem_never_a_crash(text: str, problem: str) -> None:
    with pytest.raises(CallProblem, match=problem):
        read_call(text, TOOLS)


def test_plain_text_is_an_answer() -> None:
    assert read_call("It is sunny in Paris.", TOOLS) is None


def test_check_args_walks_arrays_and_enums() -> None:
    schema = {"type": "array", "items": {"enum": ["a", "b"]}}
    assert check_args(schema, ["a", "b"]) is None
    assert "is not one of" in (check_args(schema, ["a", "c"]) or "")


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "string"},
        {"properties": []},
        {"properties": {"a": {"type": "str"}}},
        {"required": "a"},
    ],
)
def test_bad_schemas_are_refused(parameters: dict) -> None:
    with pytest.raises(ValueError):
        ClientTool(name="f", parameters=parameters)


def test_the_call_grammar_is_accepted_by_llama_cpp_and_matches_its_own_blocks(
    model_path: object,
) -> None:
    checked: list[str] = []

    def check(gbnf: str) -> None:
        validate_gbnf(gbnf, model_path=model_path)  # llama.cpp's parser
        checked.append(gbnf)

    grammar = call_grammar(TOOLS, check)
    assert checked == [grammar] and grammar.startswith('root ::= "```call\\n"')
    assert '\\"tool\\": \\"get_weather\\"' in grammar and '\\"tool\\": \\"ping\\"' in grammar
    with pytest.raises(GrammarError, match="llama.cpp rejected"):
        validate_gbnf(grammar.replace("root ::=", "root ::= ("), model_path=model_path)


def test_approvals_name_tools_or_globs() -> None:
    assert approver(None) is None and approver(" ") is None
    confirm = approver("todos.add, reminders.*")
    assert confirm is not None
    assert confirm("todos.add", {}) and confirm("reminders.snooze", {})
    assert not confirm("todos.done", {}) and not confirm("shell.run", {"cmd": "ls"})
    everything = approver("*")
    assert everything is not None and everything("shell.run", {})
    for bad in ("todos", "rm -rf /", "todos.add;x"):
        with pytest.raises(BadApproval):
            approver(bad)
