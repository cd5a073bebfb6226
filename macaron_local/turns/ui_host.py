"""The runtime side of UI actions: tool calls through the agent's gate, model turns as sticky
tool results routed back to L3.

Owns :class:`RuntimeHost`, the :class:`~macaron_local.genui.actions.ActionHost` over a real
:class:`~macaron_local.turns.pipeline.Runtime`. Tool calls go through the L1 agent's
:class:`~macaron_local.agent.tools.ToolGate` (its allowlist and confirmation rules apply);
a ``send`` becomes a turn with ``tool_result_of=<the UI's turn>`` so it skips routing and
returns to the specialist that drew the UI. It must not build turn text (``actions.py`` does,
and that is where NoAI is enforced).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from macaron_local.errors import PluginError

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn, ToolGate
    from macaron_local.turns.pipeline import Runtime


class RuntimeHost:
    """Actions of the UI drawn by turn ``turn_id`` in session ``session_id``."""

    def __init__(
        self,
        runtime: Runtime,
        session_id: str,
        turn_id: str,
        *,
        tool_label: str | None = None,  # None: the profile's agent label
        confirm: ConfirmFn | None = None,
    ) -> None:
        self.runtime, self.session_id, self.turn_id = runtime, session_id, turn_id
        self.tool_label = tool_label
        self.confirm = confirm  # answers this host's confirmations (else the agent's own)

    def _gate(self) -> ToolGate:
        """The agent's gate; with ``confirm``, a copy that asks it instead (same allowlist)."""
        gate = self.runtime.agent(self.session_id, self.tool_label).gate
        if self.confirm is None:
            return gate
        from macaron_local.agent.tools import ToolGate

        return ToolGate(
            gate.registry,
            allow=gate.allow,
            confirm=self.confirm,
            auto_approve=gate.auto_approve,
            context=gate.context,
            timeout_s=gate.timeout_s,
        )

    def tool_function(self, name: str) -> Callable[..., Any]:
        gate = self._gate()
        spec = gate.registry.get(name)
        if spec is None or not gate.allowed(name):
            raise PluginError(
                f"tool {name} is not available to the agent",
                hint="check the profile's [tools.allow] and the plugins",
            )
        return spec.func

    def call_tool(self, name: str, kwargs: dict[str, Any]) -> Any:
        return self._gate().call(name, kwargs=kwargs)

    def send_turn(self, text: str) -> Any:
        from macaron_local.turns.turn import TurnRequest

        request = TurnRequest(self.session_id, text, tool_result_of=self.turn_id)
        return self.runtime.run_turn(request)
