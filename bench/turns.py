"""Turn overhead: a scripted conversation across all four specialists, 10 turns or many more.

Run ``python bench/turns.py [--profile P] [--turns N] [--answer-tokens N] [--json OUT]
[--compare BEFORE.json]``. The real runtime (engine, store in a temporary folder, background
summaries) runs a ten-turn script that moves between L0 Chat, L1 Agent, L2 Coding and L3 GenUI,
``--turns`` times in all (the script again and again): each turn is auto-routed unless, in the
script's first pass, its intended label has not occurred yet and this is the last turn meant for
it (then it is pinned), so all four labels answer. A turn that fails is recorded and the
conversation goes on. Per turn and in total it prints:

1. the share of user-visible latency (turn start -> last answer token) spent routing (the route
   request's own time, without its queue wait) and waiting for summary work: the time the turn
   waited for a pending summary that its view needed (``Runtime.summary_for``) plus the time its
   route and answer requests queued on the engine while a background summary step ran
   (``Completion.queue_s``; for L1, every agent step's request). Target <= 10%.
2. time to first token against plain ``llama_cpp.Llama.create_chat_completion`` on the same view
   messages with the same model file: one ``Llama(model, n_ctx=4096)`` with the engine's thread
   counts that keeps its prefix cache as a plain chat app does (each call reuses what it shares
   with the previous prompt; never reset), run after the conversation. On long runs only the
   figure's turns are timed, each after the turn before it (untimed), so the cache holds what it
   would hold in the app. "turn" TTFT is the record's ``ttft_ms``, from the user's send (routing,
   the view, summary waits and queueing included); "answer" TTFT from the answer request's
   submission (prefix reuse only). Target <= 1.2x.
3. with ``--turns`` above the script: at turns 1, 30, 100, 300 (those the run reaches, and its
   last) the first-token time, reused prompt tokens, the process's RSS and the view's size, and
   the failed turns; ``--compare`` puts an earlier run's JSON (say, the commit before a change,
   from a ``git worktree`` with ``PYTHONPATH`` at it) beside this one.

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


FIGURE_TURNS = (1, 30, 100, 300)


def figure_turns(n: int) -> list[int]:
    """The turns a long run reports (and times the baseline on): 1, 30, 100, 300 and the last."""
    return sorted({t for t in FIGURE_TURNS if t <= n} | {n})


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_conversation(
    rt: Any,
    answer_tokens: int | None,
    think_s: float,
    n_turns: int,
    keep_views: set[int],
    partial: Path | None = None,
) -> list[dict[str, Any]]:
    """Run the script ``n_turns`` turns long; per turn: latencies, route/summary overhead, the
    answer request, memory, and the view (its messages only for turns in ``keep_views``).
    Every 10 turns of a long run, the turns so far (no views) go to ``partial``."""
    from macaron_local.errors import TurnError

    rec = Recorder(rt)
    session = rt.new_session("bench/turns.py")
    seen: set[str] = set()
    turns = []
    for i in range(n_turns):
        intended, text = SCRIPT[i % len(SCRIPT)]
        # the user reads the answer and types the next message (the first one too: the app is
        # open before they finish typing it)
        time.sleep(think_s)
        first_pass = i < len(SCRIPT)
        last_chance = all(lab != intended for lab, _ in SCRIPT[i + 1 :])
        pin = intended if first_pass and intended not in seen and last_chance else None
        r0, w0, v0 = rec.mark()
        times: list[float] = []
        started = time.perf_counter()
        try:
            result = rt.run_turn(
                TurnRequest(session.id, text, label=pin),
                TurnEvents(on_text=lambda _p, times=times: times.append(time.perf_counter())),
            )
        except TurnError as exc:
            print(f"turn {i + 1} failed: {exc}", file=sys.stderr, flush=True)
            turns.append({"turn": i + 1, "intended": intended, "failed": str(exc)})
            continue
        seen.add(result.label)
        turns.append(_measured(rt, rec, (r0, w0, v0), result, times, started, i + 1, intended))
        turns[-1]["max_tokens"] = answer_tokens
        if i + 1 not in keep_views:
            turns[-1]["view"] = None
        if n_turns > len(SCRIPT) and (i + 1) % 10 == 0:
            t = turns[-1]
            print(
                f"turn {i + 1}: ttft {t['ttft_ms']:.0f} ms, view {t['n_prompt']} tok "
                f"({t['n_reused']} reused), rss {t['rss_mib']:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
            if partial is not None:
                rows = [{k: v for k, v in x.items() if k != "view"} for x in turns]
                partial.write_text(json.dumps({"turns": rows}, default=str))
    rt.finish_pending()
    return turns


def _measured(
    rt: Any,
    rec: Recorder,
    marks: tuple[int, int, int],
    result: Any,
    times: list[float],
    started: float,
    number: int,
    intended: str,
) -> dict[str, Any]:
    """One turn's figures from the recorder's requests since ``marks`` and the turn record."""
    from macaron_local.store import get_turn

    r0, w0, v0 = marks
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
    view = rec.views[v0]
    return {
        "turn": number,
        "intended": intended,
        "label": result.label,
        "route": result.route_kind,
        "latency_s": last - started,
        "route_s": route_s,
        "summary_wait_s": sum(rec.summary_waits[w0:]) + queued,
        "view_summary_wait_s": sum(rec.summary_waits[w0:]),
        "engine_queue_s": queued,
        "ttft_turn_s": first - started,
        # the record's own first-token time (older runtimes: route + answer request)
        "ttft_ms": result.timings.get("ttft_ms"),
        "ttft_answer_s": answer_done.ttft_s,
        "n_prompt": answer_done.n_prompt,
        "n_reused": answer_done.n_reused,
        "n_generated": sum(d.n_generated for d in steps),
        "steps": len(steps),
        "view": view.messages,
        "view_messages": len(view.messages),
        "view_dropped": getattr(view, "dropped", 0),
        "provisional": len(get_turn(rt.db(), result.id).meta.get("provisional_summaries", [])),
        "rss_mib": rss_mib(),
    }


def baseline_ttft(
    model_path: Path, turns: list[dict[str, Any]], threads: tuple[int, int], timed: set[int]
) -> None:
    """Plain Llama.create_chat_completion on the turns' views, in order, keeping its prefix
    cache: each turn in ``timed`` is timed right after the turn before it ran (untimed, when
    it is not timed itself), so its cache holds what the app's would hold."""
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(model_path),
        n_ctx=4096,
        verbose=False,
        n_threads=threads[0],
        n_threads_batch=threads[1],
    )

    def first_token(messages: list[dict[str, str]]) -> float | None:
        started = time.perf_counter()
        for chunk in llm.create_chat_completion(
            messages=messages, max_tokens=8, temperature=0.0, stream=True
        ):
            if chunk["choices"][0]["delta"].get("content"):
                return time.perf_counter() - started
        return None

    by_number = {t["turn"]: t for t in turns if t.get("view")}
    try:
        for number in sorted(timed):
            t = by_number.get(number)
            before = by_number.get(number - 1)
            if t is None:  # a failed turn
                continue
            if before is not None and number - 1 not in timed:
                first_token(before["view"])  # what the app's cache holds before this turn
            t["ttft_base_s"] = first_token(t["view"])
            t["n_prompt_base"] = llm.n_tokens
    finally:
        llm.close()


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _x(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def print_report(every: list[dict[str, Any]], facts: dict[str, Any]) -> None:
    turns = [t for t in every if "failed" not in t]
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
    for t in turns if len(every) <= 2 * len(SCRIPT) else []:
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
    print(f"| user-visible latency ({len(turns)} turns) | {lat:.2f} s | | |")
    print(f"| failed turns | {len(every) - len(turns)} of {len(every)} | 0 | |")
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


FIGURE_COLUMNS = (  # (header, turn key, format)
    ("TTFT ms (record)", "ttft_ms", "{:.0f}"),
    ("TTFT ms (seen)", "ttft_turn_s", "{:.0f}"),
    ("plain ms", "ttft_base_s", "{:.0f}"),
    ("prompt tok", "n_prompt", "{}"),
    ("reused tok", "n_reused", "{}"),
    ("RSS MiB", "rss_mib", "{:.0f}"),
    ("view msgs", "view_messages", "{}"),
)


def _cell(t: dict[str, Any] | None, key: str, fmt: str) -> str:
    if t is None:
        return "-"
    if "failed" in t:
        return "FAILED"
    v = t.get(key)
    if v is None:
        return "-"
    return fmt.format(v * 1000 if key.endswith("_s") else v)


def print_figure(
    turns: list[dict[str, Any]], before: list[dict[str, Any]] | None, labels: tuple[str, str]
) -> None:
    """The long-run figure: per reported turn, this run (and ``before``) side by side."""
    runs = [(labels[1], turns)] if before is None else [(labels[0], before), (labels[1], turns)]
    n = max(t["turn"] for _, ts in runs for t in ts)
    print("\n| turn | run | label | " + " | ".join(h for h, _, _ in FIGURE_COLUMNS) + " |")
    print("|---:|---|---|" + "---:|" * len(FIGURE_COLUMNS))
    for number in figure_turns(n):
        for name, ts in runs:
            t = next((x for x in ts if x["turn"] == number), None)
            cells = [_cell(t, key, fmt) for _, key, fmt in FIGURE_COLUMNS]
            label = "-" if t is None else t.get("label", t["intended"])
            print(f"| {number} | {name} | {label} | " + " | ".join(cells) + " |")
    print("\n| run | turns | failed | views with a provisional note | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, ts in runs:
        ok = [t for t in ts if "failed" not in t]
        print(
            f"| {name} | {len(ts)} | {len(ts) - len(ok)} "
            f"| {sum(1 for t in ok if t['provisional'])} of {len(ok)} "
            f"| {max((t['rss_mib'] for t in ok if 'rss_mib' in t), default=float('nan')):.0f} |"
        )


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
    ap.add_argument(
        "--turns",
        type=int,
        default=len(SCRIPT),
        help=f"turns in all, the script repeated (default {len(SCRIPT)}: the script once)",
    )
    ap.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="an earlier run's --json, printed beside this one in the long-run figure",
    )
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    long_run = args.turns > len(SCRIPT)
    timed = set(figure_turns(args.turns)) if long_run else set(range(1, args.turns + 1))
    keep_views = timed | {t - 1 for t in timed}
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
                "turns": args.turns,
                "think_s": args.think,
                "summary_wait_s": rt.profile.memory.summary_wait_s,
                "router_prefix": f"restored from disk ({held} tokens)" if held else "read anew",
            }
            print("running the conversation...", file=sys.stderr, flush=True)
            partial = args.json.with_suffix(".partial.json") if args.json else None
            turns = run_conversation(
                rt, args.answer_tokens, args.think, args.turns, keep_views, partial
            )
            model = rt.engine.info.path
        finally:
            rt.close()
    if not args.no_baseline:
        print("running the plain Llama baseline...", file=sys.stderr, flush=True)
        baseline_ttft(model, turns, threads, timed)
    print_report(turns, facts)
    if long_run or args.compare:
        before = json.loads(args.compare.read_text())["turns"] if args.compare else None
        print_figure(turns, before, (str(args.compare or ""), "this run"))
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
