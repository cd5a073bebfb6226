"""What one turn costs in the text layer: chat renders and tokenizations, per hop.

Runs real turns on the embedded model (the shipped ``tall-local`` profile, a fresh home and
database): an auto-routed chat turn, a pinned L2 turn and an agent turn, and counts the
tokenizer's ``render_chat`` and ``tokenize`` calls (and the tokens tokenized) from the start
of ``run_turn`` to its return; the background summary is counted on its own. Works on the code
before and after the issue-22 refactor (it only patches ``Vocab``), so both can be measured
and printed as ratios:

    python bench/turn_shape.py --json /tmp/after.json
    git worktree add /tmp/before <commit> && PYTHONPATH=/tmp/before python bench/turn_shape.py \
        --json /tmp/before.json
    python bench/turn_shape.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

TURNS = [
    ("auto", "What is a good name for a small grey cat?", None),
    ("pinned L2", "Write a Python function that reverses a list.", "L2"),
    ("agent L1", "Add 'buy oat milk' to my todo list.", "L1"),
]


def measure() -> dict[str, dict[str, int]]:
    os.environ["MACARON_HOME"] = tempfile.mkdtemp(prefix="turn-shape-")
    from macaron_local.engine import tokenizer
    from macaron_local.turns.pipeline import Runtime

    counts: Counter[str] = Counter()
    real_tok, real_render = tokenizer.Vocab.tokenize, tokenizer.Vocab.render_chat

    def tokenize(self, text, *a, **kw):
        out = real_tok(self, text, *a, **kw)
        counts["tokenize"] += 1
        counts["tokens"] += len(out)
        return out

    def render(self, *a, **kw):
        counts["render_chat"] += 1
        return real_render(self, *a, **kw)

    tokenizer.Vocab.tokenize, tokenizer.Vocab.render_chat = tokenize, render  # type: ignore[method-assign]
    out: dict[str, dict[str, int]] = {}
    with Runtime.open("tall-local", db_path=Path(os.environ["MACARON_HOME"]) / "m.db") as rt:
        rt.finish_pending()
        for name, text, label in TURNS:
            session = rt.new_session(name).id
            counts.clear()
            _run(rt, session, text, label)
            out[name] = dict(counts)
            counts.clear()
            rt.finish_pending()
            out[name + " (summary)"] = dict(counts)
    return out


def _run(rt, session: str, text: str, label: str | None) -> None:
    try:
        from macaron_local.turns.turn import TurnRequest
    except ImportError:  # the code before the refactor: eight keywords
        rt.run_turn(session, text, label=label)
        return
    rt.run_turn(TurnRequest(session, text, label=label))


def compare(before: dict, after: dict) -> None:
    print(f"{'turn':<22}{'what':<13}{'before':>8}{'after':>8}{'ratio':>8}")
    for name in after:
        for what in ("render_chat", "tokenize", "tokens"):
            b, a = before.get(name, {}).get(what, 0), after[name].get(what, 0)
            ratio = f"{a / b:.2f}x" if b else "-"
            print(f"{name:<22}{what:<13}{b:>8}{a:>8}{ratio:>8}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    args = ap.parse_args()
    if args.compare:
        compare(*(json.loads(p.read_text()) for p in args.compare))
        return
    result = measure()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    json.dump(result, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
