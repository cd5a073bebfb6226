"""Learning after deployment, the data side: the opt-in, local, redacted experience log.

Modules: ``settings`` (opt-in: the user's choice, else the profile's ``[experience]``),
``redact`` (secrets and NoAI text never stored), ``log`` (record turns, feedback, implicit
signals; status, export, purge), ``checkers`` (automatic answer checks), ``datasets`` (SFT,
preference, routing and checkable sets for the refine loop), ``cli`` (``macaron experience``).
Importing this package opens nothing and never loads torch.
"""

from __future__ import annotations

from macaron_local.experience.log import (
    ExperienceRow,
    attach_checker,
    exclude_session,
    export,
    purge,
    record_feedback,
    record_turn,
    rows,
    status,
)
from macaron_local.experience.redact import redact
from macaron_local.experience.settings import EXPLAINER, enabled, set_user_choice

__all__ = [
    "EXPLAINER",
    "ExperienceRow",
    "attach_checker",
    "enabled",
    "exclude_session",
    "export",
    "purge",
    "record_feedback",
    "record_turn",
    "redact",
    "rows",
    "set_user_choice",
    "status",
]
