"""Text formats that training and serving must share byte for byte.

Owns how one turn is shown to the summary hop. The turn pipeline imports
:func:`render_turn_for_summary` from here, and the refine pipeline trains the summary skill on
exactly the same text, so the two can never drift. Pure functions, no imports of torch.
"""

from __future__ import annotations


def render_turn_for_summary(request: str, answer: str) -> str:
    """The user message of the summary hop: the turn's request and answer, labelled."""
    return f"User request:\n{request.strip()}\n\nYour answer:\n{answer.strip()}"
