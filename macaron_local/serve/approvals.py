"""The server's confirmation gate: which side-effecting tools one request approves.

A server turn has nobody to ask, so a call of the server's own side-effecting tools
(``todos.add``, ``reminders.add``, ``shell.run``, ...) is declined unless the request approves
it: the ``X-Macaron-Approve`` header lists tool names or globs (``todos.add, reminders.*``; ``*``
approves every tool). Owns reading that header into the turn's confirmation answerer. Must not:
run a tool, or approve anything the header does not name.
"""

from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from macaron_local.agent.tools import ConfirmFn

APPROVE_HEADER = "X-Macaron-Approve"
PATTERN = re.compile(r"^(\*|[A-Za-z0-9_*?]+\.[A-Za-z0-9_*?]+)$")


class BadApproval(ValueError):
    """The header names something that is not a tool name or glob."""


def approvals(header: str | None) -> tuple[str, ...]:
    """The patterns of ``header`` (comma-separated); BadApproval for one that is not
    ``module.function``, a glob of one, or ``*``."""
    names = tuple(p.strip() for p in (header or "").split(",") if p.strip())
    for name in names:
        if not PATTERN.match(name):
            raise BadApproval(
                f"{APPROVE_HEADER}: {name!r} is not a tool name (module.function), "
                "a glob of one (todos.*) or *"
            )
    return names


def approver(header: str | None) -> ConfirmFn | None:
    """The turn's answerer: yes for a tool the header names, no for any other (None: no
    header, every side-effecting call is declined)."""
    patterns = approvals(header)
    if not patterns:
        return None

    def confirm(tool: str, args: dict[str, Any]) -> bool:
        return any(fnmatch.fnmatchcase(tool, p) for p in patterns)

    return confirm
