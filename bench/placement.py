"""Benchmark: slot placement, one resident KV sequence with parked snapshots vs a sequence per slot.

Run ``python bench/placement.py [--turns N] [--reps N]``. On the embedded SmolLM2-135M Q4_1 base
with the four shipped adapters it measures, side by side in one run, the engine with
``resident_slots=1`` (the CPU design: every switch parks the current slot as a host snapshot and
restores the next) against ``resident_slots=5`` (the design for a KV on a GPU: no copies until
the seats run out) and prints each figure as a ratio, new (resident) over old (parked):

1. switch cost: a one-token request on another adapter's slot that already holds its view,
   cycling over five slots (four labels and the router), median over the cycle;
2. resident memory (VmRSS) with the five slots filled, each placement in its own subprocess;
3. greedy decode tokens/s on one slot;
4. a conversation of ``--turns`` turns on the real runtime (labels pinned in a cycle, short
   answers): prompt tokens evaluated per turn (not reused from a slot's KV).

On a CPU a snapshot is a copy within host memory of only the used cells; on a GPU it crosses
the bus, which this machine cannot show. A benchmark, not a test: asserts nothing, is never
collected by pytest, writes only in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# five seats: one per slot used here (the four labels and the router), so "resident" never
# parks; the rule's nine (docs/profiles.md) adds each label's summary slot, which this bench
# does not use
SEATS = {"parked": 1, "resident": 5}
N_CTX = 2048
SYSTEM = "You are Macaron, a private assistant on this computer. Keep answers short. " * 12
SLOTS = ["L0", "L1", "L2", "L3", "router"]


def _engine(seats: int):
    sys.path.insert(0, str(Path(__file__).parent))
    from engine import shipped_adapters

    from macaron_local.engine import Engine, EngineConfig
    from macaron_local.manifests import embedded_model_file

    eng = Engine(embedded_model_file(), EngineConfig(n_ctx=N_CTX, resident_slots=seats))
    for i, path in enumerate(shipped_adapters()):
        eng.load_adapter(f"L{i}", path)
    return eng


def _fill(eng) -> dict[str, list[int]]:
    views = {}
    for key in SLOTS:
        adapter = key if key != "router" else "L0"
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Hi {key}"}]
        views[key] = eng.tokenize(eng.render_chat(msgs))
        eng.generate(views[key], adapter=adapter, slot=key, max_tokens=1).result()
    return views


def bench_switch(seats: int, reps: int) -> float:
    """Median ms of a one-token request on the next slot of the cycle, each holding its view."""
    eng = _engine(seats)
    try:
        views = _fill(eng)
        times = []
        for _ in range(reps):
            for key in SLOTS:
                adapter = key if key != "router" else "L0"
                t0 = time.perf_counter()
                eng.generate(views[key], adapter=adapter, slot=key, max_tokens=1).result()
                times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)
    finally:
        eng.close()


def bench_decode(seats: int, n: int = 64) -> float:
    eng = _engine(seats)
    try:
        views = _fill(eng)
        done = eng.generate(views["L2"], adapter="L2", slot="L2", max_tokens=n).result()
        return (len(done.tokens) - 1) / max(1e-9, done.total_s - done.ttft_s)
    finally:
        eng.close()


def child_rss(seats: int) -> float:
    eng = _engine(seats)
    _fill(eng)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_rss(seats: int) -> float:
    cmd = [sys.executable, __file__, "--child-rss", str(seats)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


PROFILE = """
schema_version = 1
extends = "tall-local"

[profile]
id = "placement-{seats}"
version = "1.0.0"
description = "bench/placement.py"

[resources]
n_ctx = {n_ctx}
resident_slots = {seats}

[sampling.defaults]
temperature = 0.0
max_tokens = 24
"""


def bench_conversation(seats: int, turns: int) -> list[int]:
    """Prompt tokens evaluated (not reused) per turn of a pinned-label conversation."""
    from macaron_local.turns.pipeline import Runtime
    from macaron_local.turns.turn import TurnRequest

    with tempfile.TemporaryDirectory() as home:
        folder = Path(home) / "config" / "profiles"
        folder.mkdir(parents=True)
        name = f"placement-{seats}"
        (folder / f"{name}.toml").write_text(PROFILE.format(seats=seats, n_ctx=N_CTX))
        import os

        before, os.environ["MACARON_HOME"] = os.environ.get("MACARON_HOME"), home
        evaluated = []
        try:  # the runtime reads its home while it runs, not only at open
            with Runtime.open(name, db_path=Path(home) / "m.db") as rt:
                s = rt.new_session("bench")
                labels = list(rt.profile.labels)
                for i in range(turns):
                    label = labels[i % len(labels)]
                    ask = f"Turn {i}: a short question for {label} about the weekend."
                    record = rt.run_turn(TurnRequest(s.id, ask, label=label))
                    evaluated.append(record.tokens["prompt"] - record.tokens["cached"])
        finally:  # the rest of this process keeps its own home
            os.environ.pop("MACARON_HOME")
            if before is not None:
                os.environ["MACARON_HOME"] = before
        return evaluated


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child-rss", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_rss:
        print(child_rss(args.child_rss))
        return 0
    rows = []
    got = {m: {} for m in SEATS}
    for mode, seats in SEATS.items():  # one mode after the other, the same work each
        got[mode]["switch_ms"] = bench_switch(seats, args.reps)
        got[mode]["rss_mib"] = run_rss(seats)
        got[mode]["decode_tps"] = bench_decode(seats)
        conv = bench_conversation(seats, args.turns)
        got[mode]["evaluated_mean"] = statistics.mean(conv)
        got[mode]["evaluated_after_4"] = statistics.mean(conv[4:]) if len(conv) > 4 else 0.0
        print(f"{mode}: {json.dumps(got[mode])}", flush=True)
    old, new = got["parked"], got["resident"]
    for key, what in (
        ("switch_ms", "switch: 1-token request on another slot's view, ms"),
        ("rss_mib", "RSS with 5 slots filled, MiB"),
        ("decode_tps", "decode tok/s, greedy 64"),
        ("evaluated_mean", f"prompt tokens evaluated per turn ({args.turns} turns)"),
        ("evaluated_after_4", "  the same after the first 4 turns"),
    ):
        ratio = new[key] / old[key] if old[key] else float("nan")
        rows.append(f"| {what} | {old[key]:.1f} | {new[key]:.1f} | {ratio:.2f}x |")
    print("\n| figure | parked (1 sequence) | resident (5 sequences) | resident / parked |")
    print("|---|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
