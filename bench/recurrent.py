"""Benchmark: prefix reuse on a recurrent base, with state checkpoints vs without.

Run ``python bench/recurrent.py [--turns 30]``. A recurrent state (Mamba, RWKV, the recurrent
layers of a hybrid such as Gated DeltaNet) cannot lose the tail of a sequence: a prompt that
shares only a prefix with its slot is read from the start unless a checkpoint of the state at
that prefix exists. On a two-layer random Mamba built like the one in
``tests/engine/test_recurrent.py`` (the embedded model's tokenizer; no such base is installed
here), the engine runs the turn pattern of the app for ``--turns`` turns, once with
``state_checkpoints=0`` (old) and once with the default (new), in one run:

- route: the router's fixed prompt (read once at start, like the warm-up) plus the request;
- answer: the whole conversation rendered with the chat template (the answers as text, as the
  view shows them) on the answer slot, 16 tokens;
- summary: a short prompt about the turn on its own slot.

Per turn it records the prompt tokens evaluated (not reused) by each hop and prints turns 1, 10,
20, 30 and the mean, new over old. A benchmark, not a test: asserts nothing, writes only to a
temporary folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUTER = "You are the router. Answer with the label of the specialist for the request. " * 5
REQUESTS = (
    "remind me at 5 to call mom",
    "write a python function that sums a list",
    "what should I cook tonight?",
    "show me a form to compare three hotels",
    "how many days until the 17th of October?",
)


def conversation(model: Path, turns: int, checkpoints: int) -> list[dict[str, float]]:
    from macaron_local.engine import Engine, EngineConfig

    rows = []
    with Engine(model, EngineConfig(n_ctx=4096, state_checkpoints=checkpoints)) as eng:
        fixed = eng.tokenize(ROUTER)
        warm = eng.prefill(fixed, slot="route")
        if warm is not None:
            warm.result()
        history = [{"role": "system", "content": "You are a helpful assistant."}]
        for i in range(turns):
            text = f"{REQUESTS[i % len(REQUESTS)]} (turn {i + 1})"
            t0 = time.perf_counter()
            route = eng.complete(fixed + eng.tokenize(" " + text), slot="route", max_tokens=2)
            history.append({"role": "user", "content": text})
            answer = eng.complete(eng.chat_tokens(history), slot="answer", max_tokens=16)
            history.append({"role": "assistant", "content": answer.text})
            note = f"Summarize the turn in one line.\nUser: {text}\nAssistant: {answer.text}"
            summary = eng.complete(eng.tokenize(note), slot="summary", max_tokens=8)
            rows.append(
                {
                    "turn": i + 1,
                    "route": route.n_evaluated,
                    "answer": answer.n_evaluated,
                    "answer_prompt": answer.n_prompt,
                    "summary": summary.n_evaluated,
                    "s": time.perf_counter() - t0,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=30)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from macaron_local.manifests import embedded_model_file
    from tests.engine.test_recurrent import build_mamba

    with tempfile.TemporaryDirectory(prefix="bench-recurrent-") as tmp:
        model = build_mamba(Path(tmp) / "tiny-mamba.gguf", embedded_model_file())
        old = conversation(model, args.turns, checkpoints=0)
        new = conversation(model, args.turns, checkpoints=3)
    print(f"# bench/recurrent.py: tiny Mamba, {args.turns} turns, prompt tokens evaluated\n")
    print("| turn | answer view | old route | new route | old answer | new answer "
          "| old summary | new summary | old total | new total | new/old |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    shown = sorted({t for t in (1, 10, 20, 30) if t <= args.turns} | {args.turns})
    for o, n in zip(old, new, strict=True):
        if o["turn"] not in shown:
            continue
        ot, nt = (r["route"] + r["answer"] + r["summary"] for r in (o, n))
        print(
            f"| {o['turn']} | {n['answer_prompt']} | {o['route']} | {n['route']} | {o['answer']} "
            f"| {n['answer']} | {o['summary']} | {n['summary']} | {ot} | {nt} "
            f"| {nt / ot:.2f}x |"
        )
    mean_old = statistics.mean(r["route"] + r["answer"] + r["summary"] for r in old)
    mean_new = statistics.mean(r["route"] + r["answer"] + r["summary"] for r in new)
    s_old, s_new = (statistics.mean(r["s"] for r in rows) for rows in (old, new))
    print(
        f"\nmean per turn: evaluated {mean_old:.1f} -> {mean_new:.1f} ({mean_new / mean_old:.2f}x);"
        f" wall {s_old * 1000:.0f} -> {s_new * 1000:.0f} ms ({s_new / s_old:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
