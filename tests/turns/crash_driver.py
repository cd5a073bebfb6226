"""The real turn pipeline for the SIGKILL test: starts like the app, then runs turns until killed.

Usage: python crash_driver.py DB_PATH SESSION_ID SEED [MAX_TURNS]

``MACARON_HOME`` must hold the ``test-fast`` profile (tests/turns/conftest.py writes it). The
driver opens the real :class:`Runtime` on the embedded model (which runs ``recover``), finishes
the summaries a killed run left pending (``finish_pending``), prints ``ready``, then runs turns
in the one session: auto-routed or pinned to a label, now and then a sticky tool-result turn, and
sometimes waits for the background summary before the next turn. With ``MAX_TURNS`` it stops
after that many turns and closes the runtime cleanly (exit 0); without, it runs until killed.

It prints one line per event, flushed, so the test can aim its kills and tell where they landed:
``open`` / ``pending K`` / ``ready`` (start-up), ``start N MODE`` (before each turn; MODE is
``auto``, a pinned label or ``sticky``), ``routed N LABEL KIND``, ``answer N`` (first streamed
text), ``commit-begin`` / ``commit-end`` (around the store transaction), ``done N TURN_ID``,
``summary-begin`` / ``summary-save`` / ``summary-saved`` (the summary hop), ``wait`` /
``waited`` (waiting for summaries). The event lines come from thin wrappers around the
pipeline's ``commit_turn`` and the summary hop's ``start_summary`` and ``save_summary``: they
print and delegate, nothing else. SIGUSR1 dumps every thread's stack to stderr (the test asks
for it on a hang).
"""

from __future__ import annotations

import faulthandler
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from macaron_local.errors import TurnError
from macaron_local.store import pending_summaries
from macaron_local.turns import pipeline
from macaron_local.turns import summaries as hops
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnEvents, TurnRequest

PROFILE = "test-fast"
LABELS = ("L0", "L1", "L2", "L3")
TEXTS = (
    "What is the capital of Portugal?",
    "any tips for sleeping better when it's hot",
    "Explain in two sentences why the sky looks blue.",
    "remind me to call the dentist tomorrow at 9",
    "add 'buy oat milk' to my todo list",
    "What's on my todo list today?",
    "how many days until the 1st of December?",
    "write a python function that reverses a string",
    "why does my js code print undefined: let x; console.log(x)",
    "SQL to count orders per customer",
    "regex for a 5 digit zip code",
    "help me pick a laptop: budget, weight, battery life",
    "show me a form to plan a weekend trip",
    "compare three phone plans side by side",
    "Can you tidy up this sentence: me and him goes to the shop yesterday.",
    "tell me a fun fact about octopuses",
    "list the files in my workspace",
    "fix this: for i in range(10) print(i)",
    "I want a checklist for moving house",
    "thanks, that helps!",
)
TOOL_RESULTS = (
    "[tool result] 3 open todos: milk, taxes, call mum",
    "[tool result] reminder set for 09:00",
    "[tool result] files: notes.md, budget.csv",
)


_OUT = threading.Lock()


def say(*parts: object) -> None:
    """One whole line per event (the summary thread prints too), flushed at once."""
    with _OUT:
        sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
        sys.stdout.flush()


def _instrument() -> None:
    """Print an event line around the pipeline's commit and summary steps (then delegate)."""
    commit, start, save = pipeline.commit_turn, hops.start_summary, hops.save_summary

    def commit_turn(*args: Any, **kw: Any) -> Any:
        say("commit-begin")
        record = commit(*args, **kw)
        say("commit-end")
        return record

    def start_summary(*args: Any, **kw: Any) -> Any:
        say("summary-begin")
        return start(*args, **kw)

    def save_summary(*args: Any, **kw: Any) -> Any:
        say("summary-save")
        record = save(*args, **kw)
        say("summary-saved")
        return record

    pipeline.commit_turn = commit_turn  # type: ignore[assignment]
    hops.start_summary = start_summary  # type: ignore[assignment]
    hops.save_summary = save_summary  # type: ignore[assignment]


def _plan(rng: random.Random, last: tuple[str, str] | None) -> tuple[str, dict[str, Any], str]:
    """The next turn: (text, run_turn keywords, mode for the start line)."""
    if last is not None and last[1] == "L1" and rng.random() < 0.3:
        return rng.choice(TOOL_RESULTS), {"tool_result_of": last[0]}, "sticky"
    text = rng.choice(TEXTS)
    if rng.random() < 0.45:
        label = rng.choice(LABELS)
        return text, {"label": label}, label
    return text, {}, "auto"


def main(db_path: str, session_id: str, seed: int, max_turns: int | None) -> None:
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks for stacks on a hang
    _instrument()
    say("open")
    runtime = Runtime.open(PROFILE, db_path=Path(db_path))
    say("pending", len(pending_summaries(runtime.db())))
    runtime.finish_pending()
    say("ready")
    rng = random.Random(seed)
    last: tuple[str, str] | None = None
    n = 0
    while max_turns is None or n < max_turns:
        text, kw, mode = _plan(rng, last)
        say("start", n, mode)
        first = []

        def on_text(piece: str, n: int = n, first: list[int] = first) -> None:
            if not first:
                first.append(1)
                say("answer", n)

        try:
            result = runtime.run_turn(
                TurnRequest(session_id, text, **kw),
                TurnEvents(
                    on_text=on_text, on_route=lambda d, n=n: say("routed", n, d.label, d.kind)
                ),
            )
        except TurnError as exc:  # rolled back (an empty answer, say): the session is as before
            say("failed", n, type(exc).__name__)
            n += 1
            continue
        say("done", n, result.id)
        last = (result.id, result.label)
        n += 1
        if rng.random() < 0.35:
            say("wait")
            runtime.finish_pending()
            say("waited")
    runtime.close()
    say("closed")


if __name__ == "__main__":
    main(
        sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None
    )
