"""Client tools: the OpenAI function tools an API client sends, offered to the agent label.

Owns the typed tool and choice (:class:`ClientTool`, :class:`ToolChoice`), checking a tool's
JSON schema, describing the tools in the agent's system prompt in the call format its adapter
was trained on (one fenced ```call block ``{"tool": name, "args": {...}}``; a ```repl block
that is one call expression of a client tool is read the same way), the GBNF grammar that makes
the answer a call (``tool_choice`` ``required`` or a named function), reading and checking the
call the model wrote (a known tool, an object of arguments that match its schema), and writing
a client's earlier calls back into the chat as the blocks the model wrote. A client tool runs on
the client, never here. Must not: touch HTTP, run a tool, or store anything.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from macaron_local.agent.agent_loop import extract_block, fence
from macaron_local.errors import GrammarError

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's rule for a function name
OPENS_BLOCK = re.compile(r"```(call|repl)\b")
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
CALL_NOTE = """\
The tools above run on the user's side. To call one, answer with only this block, the tool's \
name and its arguments as JSON:
```call
{"tool": "NAME", "args": {"ARGUMENT": "VALUE"}}
```
Its result comes back to you as a tool message; then answer the user from it."""


class ClientTool(BaseModel):
    """One function a client offers: its name, what it does, and its arguments' schema."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = EMPTY_SCHEMA

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError("a function name is 1-64 letters, digits, '_' or '-'")
        return value

    @field_validator("parameters")
    @classmethod
    def _parameters(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_schema(value)
        return value

    def signature(self) -> str:
        """``name(city: string, unit?: "c" | "f")``: what the prompt shows of the schema."""
        props: dict[str, Any] = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", ()))
        args = [f"{k}{'' if k in required else '?'}: {_type_text(s)}" for k, s in props.items()]
        return f"{self.name}({', '.join(args)})"


class ToolChoice(BaseModel):
    """``auto`` (answer or call), ``none`` (answer in text), ``required`` (call one of the
    tools) or ``function`` (call the tool ``name``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["auto", "none", "required", "function"] = "auto"
    name: str | None = None

    @property
    def forced(self) -> bool:
        return self.mode in ("required", "function")


class ClientCall(BaseModel):
    """A call the model wrote for a client tool, returned to the client to run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    args: dict[str, Any]

    @property
    def arguments(self) -> str:
        return json.dumps(self.args, ensure_ascii=False)


class CallProblem(ValueError):
    """The model's call block names no client tool, does not parse, or has wrong arguments."""


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


# --- schemas ---------------------------------------------------------------------------------


def check_schema(schema: Any, where: str = "parameters") -> None:
    """ValueError unless ``schema`` is an object schema this server can describe and check
    (``type``, ``properties``, ``required``, ``items``, ``enum``; other keywords are kept for
    the grammar and not checked)."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where} must be a JSON schema object")
    if where == "parameters" and schema.get("type", "object") != "object":
        raise ValueError("parameters must be a schema of type 'object'")
    kinds = schema.get("type")
    for kind in kinds if isinstance(kinds, list) else [] if kinds is None else [kinds]:
        if kind not in JSON_TYPES:
            raise ValueError(f"{where}.type: unknown JSON type {kind!r}")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise ValueError(f"{where}.properties must be an object")
    for key, sub in props.items():
        check_schema(sub, f"{where}.properties.{key}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"{where}.required must be a list of property names")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ValueError(f"{where}.enum must be a list")


def check_args(schema: Mapping[str, Any], value: Any, where: str = "args") -> str | None:
    """What is wrong with ``value`` under ``schema`` (the keywords :func:`check_schema`
    names), or None."""
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, k) for k in names):
            return f"{where}: expected {' or '.join(names)}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is not one of {schema['enum']!r}"
    if isinstance(value, dict):
        return _check_object(schema, value, where)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            if (problem := check_args(schema["items"], item, f"{where}[{i}]")) is not None:
                return problem
    return None


def _check_object(schema: Mapping[str, Any], value: dict[str, Any], where: str) -> str | None:
    props: dict[str, Any] = schema.get("properties", {})
    missing = [r for r in schema.get("required", ()) if r not in value]
    if missing:
        return f"{where}: missing required {', '.join(missing)}"
    if schema.get("additionalProperties") is False and (extra := set(value) - set(props)):
        return f"{where}: unknown {', '.join(sorted(extra))}"
    for key, item in value.items():
        if key in props and (problem := check_args(props[key], item, f"{where}.{key}")):
            return problem
    return None


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False  # JSON's true is not a number
    return isinstance(value, JSON_TYPES[kind])


def _type_text(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kinds = schema.get("type", "any")
    return " | ".join(kinds) if isinstance(kinds, list) else str(kinds)


# --- the prompt and the chat -----------------------------------------------------------------


def tool_lines(tools: Sequence[ClientTool]) -> dict[str, str]:
    """``signature -> description`` for the agent prompt's ``{tools}``."""
    return {t.signature(): t.description.strip() or "(no description)" for t in tools}


def call_block(name: str, args: Mapping[str, Any]) -> str:
    """A call as the model writes it (a client's earlier call goes back into the chat so)."""
    return fence("call", json.dumps({"tool": name, "args": dict(args)}, ensure_ascii=False))


# --- reading the model's answer --------------------------------------------------------------


def read_call(text: str, tools: Sequence[ClientTool]) -> ClientCall | None:
    """The client call ``text`` makes, or None when it is a plain answer. CallProblem when it
    opens a call block that is cut off, names no client tool or has wrong arguments."""
    block = extract_block(text)
    if block is None:
        if OPENS_BLOCK.search(text):
            raise CallProblem("the call block is not closed (the answer ran out of tokens)")
        return None
    kind, body = block
    name, args = _parse_call(body) if kind == "call" else _parse_expression(body, tools)
    by_name = {t.name: t for t in tools}
    if name not in by_name:
        offered = ", ".join(by_name) or "none"
        raise CallProblem(f"there is no tool {name!r} (the tools are: {offered})")
    if (problem := check_args(by_name[name].parameters, args)) is not None:
        raise CallProblem(f"{name}: {problem}")
    return ClientCall(id=new_call_id(), name=name, args=args)


def _parse_call(body: str) -> tuple[str, dict[str, Any]]:
    try:
        req = json.loads(body)
    except ValueError as exc:
        raise CallProblem(f'a call block is {{"tool": name, "args": {{...}}}} ({exc})') from exc
    if not isinstance(req, dict) or not isinstance(req.get("tool"), str):
        raise CallProblem('a call block is {"tool": name, "args": {...}}')
    args = req.get("args", {})
    if not isinstance(args, dict):
        raise CallProblem("a client tool's args are a JSON object of named arguments")
    return req["tool"], args


def _parse_expression(body: str, tools: Sequence[ClientTool]) -> tuple[str, dict[str, Any]]:
    """``get_weather("Paris", unit="c")``: one call of literals, positional arguments taken in
    the order of the tool's schema properties (the REPL itself is not there to run code)."""
    no_repl = "there is no REPL here: call one client tool with a ```call block"
    try:
        node = _the_call(ast.parse(body.strip()).body)
    except SyntaxError as exc:
        raise CallProblem(no_repl) from exc
    if node is None or (name := _dotted(node.func)) is None:
        raise CallProblem(no_repl)
    tool = next((t for t in tools if t.name == name), None)
    order = list(tool.parameters.get("properties", {})) if tool else []
    if len(node.args) > len(order):
        raise CallProblem(f"{name}: {len(node.args)} positional arguments for {len(order)}")
    try:
        args = {k: ast.literal_eval(a) for k, a in zip(order, node.args, strict=False)}
        args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    except ValueError as exc:
        raise CallProblem(f"{name}: arguments must be literal values ({exc})") from exc
    return name, args


def _the_call(body: list[ast.stmt]) -> ast.Call | None:
    """The call of a one-statement block: ``f(...)``, ``x = f(...)`` or ``print(f(...))``."""
    if len(body) != 1 or not isinstance(body[0], ast.Expr | ast.Assign):
        return None
    node = body[0].value
    if isinstance(node, ast.Call) and _dotted(node.func) == "print" and len(node.args) == 1:
        node = node.args[0]
    return node if isinstance(node, ast.Call) else None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (head := _dotted(node.value)) is not None:
        return f"{head}.{node.attr}"
    return None


# --- the grammar that makes the answer a call ------------------------------------------------


def call_grammar(tools: Sequence[ClientTool], check: Callable[[str], None]) -> str:
    """GBNF for one ```call block of one of ``tools`` whose args follow its schema. ``check``
    (the engine's grammar check) raises GrammarError for a grammar llama.cpp refuses, and so
    does a schema the converter cannot express."""
    from llama_cpp.llama_grammar import SchemaConverter  # pure Python, but loads libllama

    conv = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    alternatives = []
    for i, tool in enumerate(tools):
        try:
            args = conv.visit({**EMPTY_SCHEMA, **tool.parameters}, f"args-{i}")
        except Exception as exc:  # the converter raises bare exceptions
            raise GrammarError(f"the schema of {tool.name} has no grammar: {exc}") from exc
        head = json.dumps(json.dumps({"tool": tool.name})[:-1] + ', "args": ')
        alternatives.append(f'{head} {args} "}}"')
    rules = conv.format_grammar()
    grammar = f'root ::= "```call\\n" ({" | ".join(alternatives)}) "\\n```"\n{rules}'
    check(grammar)
    return grammar
