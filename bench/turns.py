"""Turn overhead: a 10-turn scripted conversation across all four specialists.

Run ``python bench/turns.py [--profile P] [--answer-tokens N] [--json OUT]``. The real runtime
(engine, store in a temporary folder, background summaries) runs ten turns that move between
L0 Chat, L1 Agent, L2 Coding and L3 GenUI: each turn is auto-routed unless its intended label has
not occurred yet and this is the script's last turn meant for it (then it is pinned), so all four
labels answer. Per turn and in total it prints:

1. the share of user-visible latency (turn start -> last answer token) spent routing (the route
   request's own time, without its queue wait) and waiting for summary work: the time the turn
   waited for a pending summary that its view needed (``Runtime.summary_for``) plus the time its
   route and answer requests queued on the engine while a background summary step ran
   (``Completion.queue_s``; for L1, every agent step's request). Target <= 10%.
2. time to first token against plain ``llama_cpp.Llama.create_chat_completion`` on the same view
   messages with the same model file (a separate ``Llama(model, n_ctx=4096)`` with the engine's
   thread counts, reset before each call so it evaluates the whole view, as a plain chat app
   does; run after the conversation, on an idle machine). "turn" TTFT is measured from the turn's
   start (routing and any wait included); "answer" TTFT from the answer request's submission
   (prefix reuse only). Target <= 1.2x.

A benchmark, not a test: asserts nothing, never collected by pytest, writes only in its
temporary folder. Instrumentation wraps the runtime's own methods (``engine.generate``,
``summary_for``, ``_view``) on the instance to record timings; it changes nothing they do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from macaron_local.turns.turn import TurnEvents, TurnRequest

SCRIPT: tuple[tuple[str, str], ...] = (  # (intended label, request)
    (
        "L0",
        "Hi! My partner and I are going to Lisbon for a long weekend in October. "
        "What is the weather usually like then?",
    ),
    ("L1", "Remind me on Friday at 18:00 to pack the passports and the phone chargers."),
    ("L0", "Which three neighbourhoods are nicest to walk around on a first visit?"),
    (
        "L3",
        "Help me choose a hotel: show me a form to compare three options by price, "
        "distance to the centre and guest rating.",
    ),
    (
        "L2",
        "Write a Python function that splits shared trip expenses fairly between two "
        "people, given a list of (payer, amount) pairs.",
    ),
    ("L1", "Add 'book the airport taxi' to my todo list."),
    ("L2", "Now write a pytest test for that function with two payers and three expenses."),
    (
        "L3",
        "Give me a packing checklist I can tick off, grouped by clothes, documents and gadgets.",
    ),
    ("L0", "Any tips for ordering coffee like a local in Portugal?"),
    ("L1", "How many days are left until the trip if we fly on the 17th of October?"),
)


class Recorder:
    """Wraps one runtime's engine requests, summary waits and views (on the instance only)."""

    def __init__(self, rt: Any) -> None:
        from macaron_local.engine import BACKGROUND

        self.rt, self.background = rt, BACKGROUND
        self.requests: list[dict[str, Any]] = []
        self.summary_waits: list[float] = []
        self.views: list[Any] = []
        generate, summary_for, view = rt.engine.generate, rt.summary_for, rt._view

        def gen(prompt: Any, **kw: Any) -> Any:
            stream = generate(prompt, **kw)
            self.requests.append(
                {"slot": kw.get("slot"), "priority": kw.get("priority", 0), "stream": stream}
            )
            return stream

        def waited_summary(turn: Any, timeout: float | None = None) -> str | None:
            t = time.perf_counter()
            try:
                return summary_for(turn, timeout=timeout)
            finally:
                self.summary_waits.append(time.perf_counter() - t)

        def captured_view(*args: Any, **kw: Any) -> Any:
            v = view(*args, **kw)
            self.views.append(v)
            return v

        rt.engine.generate, rt.summary_for, rt._view = gen, waited_summary, captured_view

    def mark(self) -> tuple[int, int, int]:
        return len(self.requests), len(self.summary_waits), len(self.views)


def run_conversation(rt: Any, answer_tokens: int | None, think_s: float) -> list[dict[str, Any]]:
    """Run the script; per turn: latencies, route/summary overhead, the view, the answer request."""
    from macaron_local.store import get_turn

    rec = Recorder(rt)
    session = rt.new_session("bench/turns.py")
    seen: set[str] = set()
    turns = []
    for i, (intended, text) in enumerate(SCRIPT):
        # the user reads the answer and types the next message (the first one too: the app is
        # open before they finish typing it)
        time.sleep(think_s)
        last_chance = all(lab != intended for lab, _ in SCRIPT[i + 1 :])
        pin = intended if intended not in seen and last_chance else None
        r0, w0, v0 = rec.mark()
        times: list[float] = []
        started = time.perf_counter()
        result = rt.run_turn(
            TurnRequest(session.id, text, label=pin),
            TurnEvents(on_text=lambda _p, times=times: times.append(time.perf_counter())),
        )
        seen.add(result.label)
        reqs = rec.requests[r0:]
        route = [q for q in reqs if q["slot"] == "route"]
        answer = [
            q
            for q in reqs
            if q["priority"] < rec.background
            and q["slot"] != "route"
            and not str(q["slot"]).startswith("summary")
        ]
        route_done = [q["stream"].result() for q in route]
        steps = [q["stream"].result() for q in answer]  # L1: one request per agent step
        answer_done = steps[0]
        queued = sum(d.queue_s for d in route_done) + sum(d.queue_s for d in steps)
        route_s = sum(d.total_s - d.queue_s for d in route_done)
        first, last = (times[0], times[-1]) if times else (started, started)
        turns.append(
            {
                "turn": i + 1,
                "intended": intended,
                "label": result.label,
                "route": result.route_kind,
                "latency_s": last - started,
                "route_s": route_s,
                "summary_wait_s": sum(rec.summary_waits[w0:]) + queued,
                "view_summary_wait_s": sum(rec.summary_waits[w0:]),
                "engine_queue_s": queued,
                "ttft_turn_s": first - started,
                "ttft_answer_s": answer_done.ttft_s,
                "n_prompt": answer_done.n_prompt,
                "n_reused": answer_done.n_reused,
                "n_generated": sum(d.n_generated for d in steps),
                "steps": len(steps),
                "view": rec.views[v0].messages,
                "provisional": len(
                    get_turn(rt.db(), result.id).meta.get("provisional_summaries", [])
                ),
                "max_tokens": answer_tokens,
            }
        )
    rt.finish_pending()
    return turns


def baseline_ttft(model_path: Path, turns: list[dict[str, Any]], threads: tuple[int, int]) -> None:
    """Plain Llama.create_chat_completion on each turn's view, whole view evaluated each time."""
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model_path),
        n_ctx=4096,
        verbose=False,
        n_threads=threads[0],
        n_threads_batch=threads[1],
    )
    try:
        for t in turns:
            llm.reset()  # a plain app re-evaluates the whole view every turn
            started = time.perf_counter()
            first = None
            for chunk in llm.create_chat_completion(
                messages=t["view"], max_tokens=8, temperature=0.0, stream=True
            ):
                if chunk["choices"][0]["delta"].get("content"):
                    first = time.perf_counter() - started
                    break
            t["ttft_base_s"] = first
            t["n_prompt_base"] = llm.n_tokens
    finally:
        llm.close()


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _x(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def print_report(turns: list[dict[str, Any]], facts: dict[str, Any]) -> None:
    print(
        f"# bench/turns.py: {facts['profile']} ({facts['profile_hash'][:19]}), "
        f"{facts['model']}, threads gen/batch {facts['threads']}, answer cap "
        f"{facts['answer_tokens'] or 'profile'}, think time {facts['think_s']} s, summary wait "
        f"{'always' if facts['summary_wait_s'] is None else str(facts['summary_wait_s']) + ' s'}, "
        f"router prompt at start: {facts['router_prefix']}"
    )
    print(
        "\n| turn | label | route | latency s | route % | summary wait % | overhead % "
        "| TTFT turn ms | TTFT answer ms | TTFT plain ms | turn/plain | answer/plain "
        "| prompt tok (reused) |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in turns:
        base = t.get("ttft_base_s")
        print(
            f"| {t['turn']} | {t['label']}{'' if t['label'] == t['intended'] else '*'} "
            f"| {t['route']} | {t['latency_s']:.2f} | {_share(t['route_s'], t['latency_s'])} "
            f"| {_share(t['summary_wait_s'], t['latency_s'])} "
            f"| {_share(t['route_s'] + t['summary_wait_s'], t['latency_s'])} "
            f"| {1000 * t['ttft_turn_s']:.0f} | {1000 * t['ttft_answer_s']:.0f} "
            f"| {'-' if base is None else f'{1000 * base:.0f}'} "
            f"| {_x(t['ttft_turn_s'], base)} | {_x(t['ttft_answer_s'], base)} "
            f"| {t['n_prompt']} ({t['n_reused']}) |"
        )
    lat = sum(t["latency_s"] for t in turns)
    route = sum(t["route_s"] for t in turns)
    wait = sum(t["summary_wait_s"] for t in turns)
    view_wait = sum(t["view_summary_wait_s"] for t in turns)
    with_base = [t for t in turns if t.get("ttft_base_s")]
    tt = sum(t["ttft_turn_s"] for t in with_base)
    ta = sum(t["ttft_answer_s"] for t in with_base)
    tb = sum(t["ttft_base_s"] for t in with_base)
    med = (
        statistics.median(t["ttft_turn_s"] / t["ttft_base_s"] for t in with_base)
        if with_base
        else None
    )
    labels = sorted({t["label"] for t in turns})
    print(f"\nlabels answered: {', '.join(labels)}; * = routed away from the intended label")
    print("\n| total | value | target | ratio to target |")
    print("|---|---:|---:|---:|")
    print(f"| user-visible latency (10 turns) | {lat:.2f} s | | |")
    print(f"| routing share | {_share(route, lat)} | | |")
    print(
        f"| views that showed a provisional note | "
        f"{sum(1 for t in turns if t['provisional'])} of {len(turns)} | | |"
    )
    print(
        f"| summary wait share (view waits {view_wait:.2f} s, engine queue "
        f"{wait - view_wait:.2f} s) | {_share(wait, lat)} | | |"
    )
    over = (route + wait) / lat if lat else 0
    print(f"| routing + summary share | {100 * over:.1f}% | <= 10% | {over / 0.10:.2f}x |")
    if with_base:
        print(f"| TTFT turn / plain (sum) | {tt / tb:.2f}x | <= 1.2x | {tt / tb / 1.2:.2f}x |")
        print(f"| TTFT turn / plain (median of turns) | {med:.2f}x | <= 1.2x | {med / 1.2:.2f}x |")
        print(f"| TTFT answer / plain (sum) | {ta / tb:.2f}x | <= 1.2x | {ta / tb / 1.2:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="tall-local")
    ap.add_argument(
        "--answer-tokens",
        type=int,
        default=None,
        help="cap every label's max_tokens (quick runs); default: the profile's",
    )
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="seconds the user pauses between turns (default 0: back to back, the "
        "worst case for summary waits)",
    )
    ap.add_argument(
        "--summary-wait",
        type=float,
        default=None,
        help="override the profile's [memory] summary_wait_s (seconds a view waits "
        "for a summary before it shows a provisional note); -1: wait always",
    )
    ap.add_argument(
        "--first-start",
        action="store_true",
        help="ignore router prefixes saved by earlier starts (the first start on a machine)",
    )
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    from macaron_local.turns.pipeline import Runtime

    with tempfile.TemporaryDirectory(prefix="bench-turns-") as tmp:
        if args.first_start:  # saved prefixes live under the cache folder: use an empty one
            from macaron_local import paths

            paths.cache_dir = lambda: Path(tmp) / "cache"  # type: ignore[assignment]
        rt = Runtime.open(args.profile, db_path=Path(tmp) / "bench.db")
        held = rt.engine.slots().get("route", (None, 0))[1]
        try:
            if args.answer_tokens:
                rt.profile = _capped(rt.profile, args.answer_tokens)
            if args.summary_wait is not None:
                wait = None if args.summary_wait < 0 else args.summary_wait
                rt.profile = rt.profile.model_copy(
                    update={"memory": rt.profile.memory.model_copy(update={"summary_wait_s": wait})}
                )
            cp = rt.engine.config.context_params()
            threads = (cp.n_threads, getattr(cp, "n_threads_batch", cp.n_threads))
            facts = {
                "profile": rt.profile.id,
                "profile_hash": rt.profile.content_hash,
                "model": rt.engine.info.path.name,
                "threads": threads,
                "answer_tokens": args.answer_tokens,
                "think_s": args.think,
                "summary_wait_s": rt.profile.memory.summary_wait_s,
                "router_prefix": f"restored from disk ({held} tokens)" if held else "read anew",
            }
            print("running the conversation...", file=sys.stderr, flush=True)
            turns = run_conversation(rt, args.answer_tokens, args.think)
            model = rt.engine.info.path
        finally:
            rt.close()
    if not args.no_baseline:
        print("running the plain Llama baseline...", file=sys.stderr, flush=True)
        baseline_ttft(model, turns, threads)
    print_report(turns, facts)
    if args.json:
        args.json.write_text(
            json.dumps({"facts": facts, "turns": turns}, indent=1, ensure_ascii=False, default=str)
        )
    return 0


def _capped(profile: Any, n: int) -> Any:
    """The profile with every label's answer budget capped at ``n`` tokens (quick runs)."""
    s = profile.sampling
    defaults = s.defaults.model_copy(update={"max_tokens": min(n, s.defaults.max_tokens or n)})
    overrides = {
        lab: o.model_copy(update={"max_tokens": min(n, o.max_tokens or n)})
        for lab, o in s.overrides.items()
    }
    return profile.model_copy(
        update={"sampling": s.model_copy(update={"defaults": defaults, "overrides": overrides})}
    )


if __name__ == "__main__":
    raise SystemExit(main())
