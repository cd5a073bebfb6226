"""Which job one parsed request runs: a client-tool turn, a stateless turn or a conversation turn.

Owns the choice and the checks that need the runtime's profile: client tools go to the agent
label (``sticky`` for a tool result), statelessly or in a stored conversation (the exchange
since the user's message); a conversation turn gets the approvals of ``X-Macaron-Approve`` as
its confirmation answerer. Must not: touch HTTP
beyond the header values it is handed, or run the job.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from macaron_local.serve import protocol as wire
from macaron_local.serve.approvals import APPROVE_HEADER, BadApproval, approver
from macaron_local.serve.conversations import Conversations
from macaron_local.serve.jobs import (
    Outcome,
    client_tool_turn,
    conversation_tool_turn,
    conversation_turn,
    stateless_turn,
)
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.route import RouteResult

CONVERSATION_HEADER = "X-Conversation-Id"


def job_for(
    rt: Runtime,
    conversations: Conversations,
    req: wire.ChatRequest,
    conversation: str | None,
    label: str | None,
    approve: str | None,
) -> Callable[..., Outcome]:
    """What the request runs (``run(emit=, cancel=)``); BadRequest for one it cannot be."""
    try:
        confirm = approver(approve)
    except BadApproval as exc:
        raise wire.BadRequest(str(exc), APPROVE_HEADER) from exc
    if req.uses_tools:
        tools = req.client_tools()
        choice = req.choice(tools)
        decision = _agent_route(rt, req, label)
        if conversation is not None:
            return partial(
                conversation_tool_turn,
                rt,
                conversations,
                conversation,
                req.exchange(),
                tools,
                choice,
                decision=decision,
            )
        return partial(client_tool_turn, rt, req.tool_messages(), tools, choice, decision=decision)
    req.choice(())  # a call it requires needs tools
    messages = req.plain_messages()
    if conversation is None:
        return partial(stateless_turn, rt, messages, label=label)
    return partial(
        conversation_turn,
        rt,
        conversations,
        conversation,
        messages[-1]["content"],
        label=label,
        confirm=confirm,
    )


def _agent_route(rt: Runtime, req: wire.ChatRequest, pinned: str | None) -> RouteResult:
    """Client tools go to the agent label: ``sticky`` for a tool result (the agent that called
    goes on), ``manual`` when the model name pins it, else ``tools``."""
    agent = rt.profile.label_for("agent")
    if agent is None:
        raise wire.BadRequest("this profile has no agent label (role 'agent') to call tools")
    if pinned is not None and pinned != agent:
        raise wire.BadRequest(
            f"{req.model} pins {pinned}; client tools are answered by the agent label {agent}",
            "model",
        )
    kind = "sticky" if req.messages[-1].role == "tool" else "manual" if pinned else "tools"
    return RouteResult(agent, kind)
