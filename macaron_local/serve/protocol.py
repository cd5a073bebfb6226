"""The OpenAI chat-completions wire format, as far as ``macaron serve`` speaks it.

Owns parsing a request body (messages with string or text-part content, ``stream``,
``stream_options.include_usage``, a model name that may pin a label, function ``tools`` and
``tool_choice``, the assistant's ``tool_calls`` and the ``tool`` results that answer them) and
building responses, stream chunks and error bodies, including ``tool_calls`` and the
``"macaron"`` extension field (route, label, adapter revision, session, turn, the server's own
tool steps). Sampling fields a client sends are accepted and ignored: the profile (the harness
contract) decides sampling. Must not: run anything.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from macaron_local.serve.client_tools import ClientCall, ClientTool, ToolChoice, call_block
from macaron_local.serve.jobs import Exchange, Outcome, RouteInfo
from macaron_local.store.db import unicode_problem

EXTENSION = "macaron"


class BadRequest(Exception):  # a signal to the HTTP edge
    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str = "{}"  # JSON text, as OpenAI sends it


class ToolCallIn(BaseModel):
    """A call in an earlier assistant message (the client ran it)."""

    model_config = ConfigDict(extra="allow")
    id: str
    type: str = "function"
    function: FunctionCall

    def args(self) -> dict[str, Any]:
        try:
            value = json.loads(self.function.arguments or "{}")
        except ValueError as exc:
            raise BadRequest(f"tool call {self.id}: arguments are not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise BadRequest(f"tool call {self.id}: arguments must be a JSON object")
        return value


class Function(BaseModel):
    model_config = ConfigDict(extra="allow")  # strict: accepted; arguments are checked anyway
    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None


class ToolDef(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    function: Function

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        if value != "function":
            raise ValueError(f"only function tools are supported, not {value!r}")
        return value


class NamedChoice(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "function"
    function: dict[str, Any]


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value not in {"system", "developer", "user", "assistant", "tool", "function"}:
            raise ValueError(f"unknown role {value!r}")
        return value

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "".join(
            str(p.get("text", "")) for p in self.content if p.get("type") in ("text", "input_text")
        )


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = ""
    messages: list[Message]
    stream: bool = False
    stream_options: StreamOptions | None = None
    tools: list[ToolDef] | None = None
    tool_choice: str | NamedChoice | None = None

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    @property
    def uses_tools(self) -> bool:
        """Client tools are in play: the client sent some, or it answers a call with a result."""
        return bool(self.tools) or self.messages[-1].role == "tool"

    def plain_messages(self) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.text()} for m in self.messages]

    def tool_messages(self) -> list[dict[str, str]]:
        """The chat with each earlier call written as the block the model wrote for it."""
        out = []
        for m in self.messages:
            text = m.text()
            if m.role == "assistant" and m.tool_calls:
                blocks = [call_block(c.function.name, c.args()) for c in m.tool_calls]
                text = "\n".join([text, *blocks] if text.strip() else blocks)
            out.append({"role": m.role, "content": text})
        return out

    def exchange(self) -> Exchange:
        """The last user message and what follows it: what a stored conversation's client-tool
        turn needs (the conversation keeps the rest). BadRequest when there is no user
        message."""
        users = [i for i, m in enumerate(self.messages) if m.role == "user"]
        if not users:
            raise BadRequest(
                "send the exchange since the last user message: that message, the assistant's "
                "tool_calls, then their tool results (the conversation keeps what came before)",
                "messages",
            )
        start = users[-1]
        flat = self.tool_messages()
        blocks = {
            c.id: call_block(c.function.name, c.args())
            for m in self.messages[start:]
            for c in m.tool_calls or ()
        }
        later = self.messages[start + 1 :]  # each tool result answers a call in it
        return Exchange(
            request=flat[start]["content"],
            after=tuple(m for m in flat[start + 1 :] if m["role"] in ("assistant", "tool")),
            system=tuple(m["content"] for m in flat if m["role"] in ("system", "developer")),
            calls=tuple(
                (blocks[m.tool_call_id or ""], m.text()) for m in later if m.role == "tool"
            ),
        )

    def client_tools(self) -> tuple[ClientTool, ...]:
        """The tools sent, checked: names, schemas, no name twice (BadRequest otherwise)."""
        tools: list[ClientTool] = []
        for i, t in enumerate(self.tools or ()):
            fields = t.function.model_dump(include={"name", "description", "parameters"})
            if fields["parameters"] is None:
                del fields["parameters"]
            try:
                tools.append(ClientTool.model_validate(fields))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = f"tools.{i}.function." + ".".join(str(p) for p in err["loc"])
                raise BadRequest(f"{where}: {err['msg']}", param=where) from exc
            if tools[-1].name in {t.name for t in tools[:-1]}:
                raise BadRequest(f"tools.{i}: a second tool {tools[-1].name!r}", f"tools.{i}")
        return tuple(tools)

    def choice(self, tools: tuple[ClientTool, ...]) -> ToolChoice:
        """``tool_choice`` as a :class:`ToolChoice` (BadRequest for one the tools cannot
        meet)."""
        raw = self.tool_choice
        if raw is None or raw in ("auto", "none", "required"):
            choice = ToolChoice(mode=raw or "auto")
        elif isinstance(raw, NamedChoice) and isinstance(raw.function.get("name"), str):
            choice = ToolChoice(mode="function", name=raw.function["name"])
        else:
            raise BadRequest(
                'tool_choice is "auto", "none", "required" or '
                '{"type": "function", "function": {"name": ...}}',
                "tool_choice",
            )
        if choice.forced and not tools:
            raise BadRequest(f"tool_choice {choice.mode!r} needs tools", "tool_choice")
        if choice.name is not None and choice.name not in {t.name for t in tools}:
            raise BadRequest(f"tool_choice names {choice.name!r}, not a tool sent", "tool_choice")
        return choice


def parse_request(body: bytes) -> ChatRequest:
    """A validated request whose last message is the user's; :class:`BadRequest` otherwise
    (also for a body that is not UTF-8 or nests deeper than the parser's recursion limit)."""
    try:
        req = ChatRequest.model_validate(json.loads((body or b"null").decode("utf-8")))
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except RecursionError as exc:
        raise BadRequest("the body nests too deeply") from exc
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}") from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise BadRequest(f"{where}: {err['msg']}", param=where) from exc
    if not req.messages or req.messages[-1].role not in ("user", "tool"):
        raise BadRequest(
            "the last message must be the user's (role 'user') or a tool result (role 'tool')",
            param="messages",
        )
    if req.messages[-1].role == "user" and not req.messages[-1].text().strip():
        raise BadRequest("the last user message is empty", param="messages")
    for i, m in enumerate(req.messages):
        texts = [m.text(), *(c.function.arguments for c in m.tool_calls or ())]
        if (problem := next(filter(None, map(unicode_problem, texts)), None)) is not None:
            raise BadRequest(f"messages.{i}: not valid Unicode text ({problem})", f"messages.{i}")
    _check_results(req.messages)
    return req


def _check_results(messages: list[Message]) -> None:
    """Each tool message answers a call of the assistant message before it (by its id)."""
    open_ids: set[str] = set()
    for i, m in enumerate(messages):
        if m.role == "assistant":
            open_ids = {c.id for c in m.tool_calls or ()}
        elif m.role == "tool":
            if m.tool_call_id is None or m.tool_call_id not in open_ids:
                raise BadRequest(
                    f"messages.{i}: a tool message answers a tool_call_id of the assistant "
                    f"message before it (got {m.tool_call_id!r})",
                    f"messages.{i}.tool_call_id",
                )
        elif m.role == "user":
            open_ids = set()


def model_ids(profile_id: str, labels: tuple[str, ...]) -> list[str]:
    """``<profile>`` routes each turn; ``<profile>:<label>`` pins a specialist."""
    return [profile_id, *(f"{profile_id}:{label}" for label in labels)]


def pinned_label(model: str, labels: tuple[str, ...]) -> str | None:
    """The label a model name pins (``...:L2``), or None: any other name is routed."""
    tail = model.rsplit(":", 1)[-1] if ":" in model else ""
    return tail if tail in labels else None


def new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def extension(route: RouteInfo, outcome: Outcome | None = None, **extra: Any) -> dict[str, Any]:
    data = asdict(route)
    if data["route_error"] is None:
        del data["route_error"]
    if outcome is not None:
        data.update(session=outcome.session_id, turn=outcome.turn_id, backend=outcome.backend)
        if outcome.failover_reason is not None:
            data["failover_reason"] = outcome.failover_reason
        if outcome.steps:  # the server's own tools (a conversation's agent turn)
            data["tool_steps"] = [
                {"step": c.step, "code": c.code, "status": c.status, "result": c.result}
                for c in outcome.steps
            ]
        if outcome.call_errors:
            data["call_errors"] = list(outcome.call_errors)
    data.update(extra)
    return data


def tool_calls(calls: tuple[ClientCall, ...], *, indexed: bool = False) -> list[dict[str, Any]]:
    """OpenAI's ``tool_calls`` (with ``index`` in a stream delta)."""
    return [
        {
            **({"index": i} if indexed else {}),
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(calls)
    ]


def message(outcome: Outcome) -> dict[str, Any]:
    if not outcome.tool_calls:
        return {"role": "assistant", "content": outcome.text}
    content = outcome.text or None
    return {"role": "assistant", "content": content, "tool_calls": tool_calls(outcome.tool_calls)}


def completion_body(
    cid: str, model: str, outcome: Outcome, usage: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message(outcome),
                "finish_reason": outcome.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": usage,
        EXTENSION: extension(outcome.route, outcome, **extra),
    }


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any] | None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    ext: dict[str, Any] | None = None,
) -> str:
    """One server-sent event carrying a ``chat.completion.chunk``."""
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        body["usage"] = usage
    if ext is not None:
        body[EXTENSION] = ext
    return sse(body)


def notice_ext(notice: Any) -> dict[str, Any]:
    """The extension of a stream event telling the client about a failover (the remote text
    streamed before it is void: ``discarded_chars``) or a wait."""
    return {
        "notice": {
            "kind": notice.kind,
            "reason": notice.reason,
            "message": notice.message,
            "discarded_chars": notice.discarded_chars,
        }
    }


def sse(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
