"""What of an answer is kept and shown: a reasoning base's thinking is not."""

from __future__ import annotations

from macaron_local.turns.answer import visible


def test_thinking_blocks_are_not_part_of_the_answer() -> None:
    assert visible("<think>The user wants a name.</think>\n\nCall it Ash.") == "Call it Ash."
    assert visible("  Plain answer.  ") == "Plain answer."
    assert visible("<think>\n</think>\n\nA. <think>again</think>B.") == "A. B."
    assert visible("<think>still thinking when the budget ran out") == ""  # nothing to show
    assert visible("Use the <thinking> tag sparingly.") == "Use the <thinking> tag sparingly."
