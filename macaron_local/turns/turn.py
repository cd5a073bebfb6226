"""What a caller hands the runtime for one turn: the request, and who hears it run.

Owns :class:`TurnRequest` (the session, the text and the choices the user made: a pinned
label, the branch point, a forced remote, a fresh seed, the turn a UI submission answers) and
:class:`TurnEvents` (the route, each text piece, notices, the per-turn confirmation answerer
and the cancel event). The CLI, the app, the server and the facade build these two; nothing
passes the eight keywords around any more. Must not: import the engine or the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn
    from macaron_local.remote.hybrid import Notice
    from macaron_local.turns.route import RouteResult

HEAD = "head"  # TurnRequest(parent_id=HEAD): continue from the session's current head


@dataclass(frozen=True)
class TurnRequest:
    """One turn to run. ``label`` pins a specialist (None: the router decides); ``parent_id``
    is where the turn attaches (HEAD, or the retried turn's parent for a new branch);
    ``tool_result_of`` makes it carry a UI's submission back to the specialist that drew it;
    ``remote`` is the user's ``/remote``; ``seed`` (a retry's fresh draw) wins over the
    profile's sampling seed."""

    session_id: str
    text: str
    label: str | None = None
    parent_id: str | None = HEAD
    tool_result_of: str | None = None
    remote: bool = False
    seed: int | None = None


@dataclass(frozen=True)
class TurnEvents:
    """Who hears one turn as it runs, and how it is stopped. ``confirm`` answers "run this
    side-effecting tool?" for this turn (None: the runtime's own answerer, else declined)."""

    on_route: Callable[[RouteResult], None] | None = None
    on_text: Callable[[str], None] | None = None
    on_notice: Callable[[Notice], None] | None = None
    confirm: ConfirmFn | None = None
    cancel: threading.Event | None = None

    def routed(self, decision: RouteResult) -> None:
        if self.on_route is not None:
            self.on_route(decision)

    def notice(self, notice: Notice) -> None:
        if self.on_notice is not None:
            self.on_notice(notice)

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


NO_EVENTS = TurnEvents()
