"""One session's agent: the gate, the REPL and the toolsmith built from a profile.

Owns wiring only: it reads the profile's ``[tools.allow]`` for the label and ``[repl]`` for the
sandbox, takes the tools the plugins registered, and exposes ``run(step, messages)``. Where no
OS sandbox can start the session has no REPL (``repl_off`` says why) and L1 works with
discrete ``call`` blocks only. The turn
pipeline keeps one per session (the REPL namespace lives as long as the session) and closes it
with the session. It must not call the model or write to the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from macaron_local import paths
from macaron_local.agent.agent_loop import DEFAULT_MAX_STEPS, AgentOutcome, Step, run_agent
from macaron_local.agent.boundary import Status
from macaron_local.agent.repl import Repl, unavailable
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ConfirmFn, ToolContext, ToolGate, ToolRegistry
from macaron_local.agent.toolsmith import Toolsmith

if TYPE_CHECKING:
    from macaron_local.hcp.schema import Profile


class AgentSession:
    """The agent side of one chat session (one REPL child, started on first use)."""

    def __init__(
        self,
        profile: Profile,
        registry: ToolRegistry,
        *,
        label: str | None = None,  # None: the profile's agent label
        confirm: ConfirmFn | None = None,
        auto_approve: Sequence[str] = (),
        workspace: Path | None = None,
        context: ToolContext | None = None,
    ) -> None:
        ws = workspace or (context.workspace if context else paths.data_dir() / "workspace")
        self.context = context or ToolContext(workspace=ws, data_dir=paths.data_dir())
        self.policy = SandboxPolicy.from_profile(profile.repl, ws)
        self.toolsmith = Toolsmith(self.policy, reserved=frozenset(registry.modules))
        if "toolsmith.save" not in registry.tools:
            self.toolsmith.register(registry)
        self.gate = ToolGate(
            registry,
            allow=profile.tool_patterns(label or profile.agent_label),
            confirm=confirm,
            auto_approve=auto_approve,
            context=self.context,
        )
        off = unavailable(self.policy)
        # no OS sandbox here: no REPL at all, the model uses one ```call block per tool
        self.repl_off = None if off is None else off_reason(off)
        self.repl = (
            None
            if off
            else Repl(
                self.policy,
                self.gate,
                promoted=self.toolsmith.promoted,
                on_tool_failed=self.toolsmith.record_failure,
            )
        )

    def run(
        self, step: Step, messages: list[dict[str, str]], *, max_steps: int = DEFAULT_MAX_STEPS
    ) -> AgentOutcome:
        return run_agent(
            step, messages, self.repl, self.gate, max_steps=max_steps, repl_off=self.repl_off
        )

    def close(self) -> None:
        if self.repl is not None:
            self.repl.close()


def off_reason(off: Status) -> str:
    return f"{off.detail}; to fix: {off.fix}" if off.fix else off.detail


def repl_warnings(profile: Profile) -> list[str]:
    """What the app shows when this machine cannot run the profile's REPL (or runs it weakly)."""
    if profile.repl.isolation == "in-process":
        return ["the REPL runs without an OS sandbox ([repl] isolation = 'in-process')"]
    off = unavailable(SandboxPolicy.from_profile(profile.repl, Path("/")))
    if off is None:
        return []
    return [f"the REPL is off (L1 uses one tool call per step): {off_reason(off)}"]
