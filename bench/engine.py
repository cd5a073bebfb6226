"""Benchmark: the Mixture-of-LoRA engine against llama-cpp-python's high-level ``Llama``.

Run ``python bench/engine.py [--quick] [--threads N] [--gpu-layers N]``. On the embedded
SmolLM2-135M Q4_1 base with the four shipped adapters (``models/adapters``, the base manifest's)
it measures, side by side in one run (medians of several repetitions), and prints one table
with each figure as a ratio against its baseline and target:

1. adapter switch cost: asking for another adapter's slot (which already holds the view) vs
   reloading ``Llama(model, lora_path=adapter)`` (with and without re-evaluating the view);
2. resident memory (VmRSS) of the engine with four adapters vs four ``Llama(lora_path=...)``
   instances, each mode in its own subprocess;
3. greedy decode tokens/s with an adapter active vs ``Llama.create_completion`` (same adapter,
   same prompt tokens, same thread counts);
4. second-turn prompt processing with per-adapter prefix reuse vs re-evaluating the whole view.

Both sides use the engine's own thread counts (``EngineConfig().context_params()``: half the
cores for generation, all but one for prompt processing) unless ``--threads`` sets one count for
both. A benchmark, not a test: it asserts nothing, is never collected by pytest and writes
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ENGINE_CTX = 2048  # the same per-request context as each baseline Llama (LLAMA_CTX)
LLAMA_CTX = 2048  # each baseline Llama instance (one conversation each)
DECODE_TOKENS = 128
SYSTEM = (
    "You are Macaron, a private assistant that runs entirely on this computer. You keep answers "
    "short, factual and friendly. You never invent facts about the user; when you do not know "
    "something you say so and suggest how to find out. You can help with planning a day, writing "
    "emails, explaining code, summarising notes and answering general questions. When the user "
    "asks for a list, use short bullet points. When the user asks for code, give one complete "
    "example and a one-line explanation. Prefer plain words over jargon. Respect the user's time: "
    "no greetings, no filler, no repeated questions. If a request is ambiguous, ask one precise "
    "question. Dates are written as YYYY-MM-DD and times in 24-hour form. The user lives in a "
    "temperate city, likes hiking, reads science fiction and is learning to cook Italian food. "
    "Today the user has a dentist appointment at 14:30 and a team meeting at 10:00, and wants to "
    "finish a draft report before the evening. Keep private details private. Tomorrow the user "
    "flies to Lisbon at 07:15, so remind them to pack the charger, the passport and the printed "
    "tickets tonight, and to check in online before midnight. The report is about energy use in "
    "the office and needs a summary, three charts and a short list of recommendations."
)
USER1 = "What should I do first today, and how long will the report take if I start after lunch?"
ANSWER1_TOKENS = 32
USER2 = "Good. Now give me a simple pasta recipe for dinner."
DECODE_USER = "Write a long, detailed story about a robot who learns to cook pasta in Rome."


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


_THREADS = [0]  # --threads; 0 = the engine's own counts (EngineConfig's default)
_GPU = [0]  # --gpu-layers, both sides (-1: every layer; the GPU check, bench/gpu_check.sh)


def threads() -> tuple[int, int]:
    """(generation, prompt processing) threads, the same for the engine and the baseline."""
    from macaron_local.engine import EngineConfig

    if _THREADS[0]:
        return _THREADS[0], _THREADS[0]
    cp = EngineConfig().context_params()
    return cp.n_threads, cp.n_threads_batch


# --- set-up ----------------------------------------------------------------------------------


def shipped_adapters() -> list[Path]:
    """The base manifest's adapters, one per label of the default profile, in label order."""
    from macaron_local.hcp import load_profile
    from macaron_local.manifests import get_manifest

    profile = load_profile("tall-local")
    manifest = get_manifest(profile.base.model)
    entries = [manifest.adapter(label) for label in profile.labels]
    return [manifest.adapter_path(e) for e in entries if e is not None]


def open_engine(model: Path, adapters: list[Path]):
    from macaron_local.engine import Engine, EngineConfig

    # 0 keeps the engine's own split (what threads() gives the baseline); N sets both to N
    eng = Engine(
        model, EngineConfig(n_ctx=ENGINE_CTX, n_threads=_THREADS[0], n_gpu_layers=_GPU[0])
    )
    for i, p in enumerate(adapters):
        eng.load_adapter(f"L{i}", p)
    return eng


def open_llama(model: Path, adapter: Path):
    from llama_cpp import Llama

    return Llama(
        str(model),
        lora_path=str(adapter),
        n_ctx=LLAMA_CTX,
        n_threads=threads()[0],
        n_threads_batch=threads()[1],
        n_gpu_layers=_GPU[0],
        verbose=False,
    )


def views(eng) -> dict[str, list[int]]:
    """The prompts (token lists, identical for both sides)."""
    sys_msg = {"role": "system", "content": SYSTEM}
    return {
        "view": eng.tokenize(eng.render_chat([sys_msg, {"role": "user", "content": USER1}])),
        "decode": eng.tokenize(
            eng.render_chat([sys_msg, {"role": "user", "content": DECODE_USER}])
        ),
    }


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


# --- 1. switch ---------------------------------------------------------------------------------


def bench_switch(eng, view: list[int], reps: int) -> dict[str, float]:
    names = sorted(eng.adapters)
    for n in names:  # every slot holds the view
        eng.complete(view, adapter=n, max_tokens=1)
    switch, same = [], []
    for _ in range(reps):
        for n in names:  # the previous request ran on the previous adapter
            switch.append(timed(lambda n=n: eng.complete(view, adapter=n, max_tokens=1))[0])
            same.append(timed(lambda n=n: eng.complete(view, adapter=n, max_tokens=1))[0])
    return {
        "switch_raw_s": median(switch),
        "same_s": median(same),
        "switch_s": max(median(switch) - median(same), 1e-6),
        "n": len(switch),
    }


def bench_reload(model: Path, adapters: list[Path], view: list[int], reps: int) -> dict[str, float]:
    load, ready = [], []
    llm = open_llama(model, adapters[-1])
    for r in range(reps):
        llm.close()
        t0 = time.perf_counter()
        llm = open_llama(model, adapters[r % len(adapters)])
        t_load = time.perf_counter() - t0
        llm.create_completion(view, max_tokens=1, temperature=0.0)
        t_eval = time.perf_counter() - t0 - t_load
        load.append(t_load)
        ready.append(t_load + t_eval)
    llm.close()
    return {"reload_s": median(load), "reload_ready_s": median(ready), "n": reps}


# --- 3. decode ---------------------------------------------------------------------------------


def bench_decode(eng, model: Path, adapter: Path, prompt: list[int], reps: int) -> dict:
    """tokens/s = (n - 1) / (T(n tokens) - T(1 token)), both with the prompt's KV reused."""
    llm = open_llama(model, adapter)

    def ours(n: int) -> tuple[float, int]:
        t, c = timed(lambda: eng.complete(prompt, adapter="L0", max_tokens=n))
        return t, c.n_generated  # type: ignore[attr-defined]

    def theirs(n: int) -> tuple[float, int]:
        t, r = timed(lambda: llm.create_completion(prompt, max_tokens=n, temperature=0.0))
        return t, r["usage"]["completion_tokens"]  # type: ignore[index]

    rates: dict[str, list[float]] = {"ours": [], "theirs": []}
    gen: dict[str, int] = {}
    for fn in (ours, theirs):  # warm: prompt evaluated once, KV kept
        fn(1)
    for _ in range(reps):
        for key, fn in (("ours", ours), ("theirs", theirs)):
            t1, _ = fn(1)
            tn, n = fn(DECODE_TOKENS)
            gen[key] = n
            rates[key].append((n - 1) / max(tn - t1, 1e-9))
    flash = llm.context_params.flash_attn_type
    llm.close()
    return {
        "ours_tps": median(rates["ours"]),
        "theirs_tps": median(rates["theirs"]),
        "ours_n": gen["ours"],
        "theirs_n": gen["theirs"],
        "llama_flash_attn_type": flash,
        "n": reps,
    }


# --- 4. second turn ------------------------------------------------------------------------------


def bench_second_turn(eng, reps: int) -> dict[str, float]:
    sys_msg = {"role": "system", "content": SYSTEM}
    turn1 = eng.render_chat([sys_msg, {"role": "user", "content": USER1}])
    reuse_s, full_s, reuse_n, full_n, n_prompt = [], [], [], [], 0
    for _ in range(reps):
        eng.reset()
        first = eng.complete(turn1, adapter="L1", max_tokens=ANSWER1_TOKENS)
        turn2 = eng.render_chat(
            [
                sys_msg,
                {"role": "user", "content": USER1},
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": USER2},
            ]
        )
        c = eng.complete(turn2, adapter="L1", max_tokens=1)
        reuse_s.append(c.prompt_s)
        reuse_n.append(c.n_evaluated)
        eng.reset()
        c = eng.complete(turn2, adapter="L1", max_tokens=1)
        full_s.append(c.prompt_s)
        full_n.append(c.n_evaluated)
        n_prompt = c.n_prompt
    return {
        "reuse_s": median(reuse_s),
        "full_s": median(full_s),
        "reuse_n": median(reuse_n),
        "full_n": median(full_n),
        "n_prompt": n_prompt,
        "n": reps,
    }


# --- 2. memory (one subprocess per mode) ---------------------------------------------------------


def child_memory(mode: str, model: Path, adapters: list[Path]) -> dict[str, float]:
    import llama_cpp  # noqa: F401 - count the library in the interpreter baseline

    import macaron_local.engine  # noqa: F401

    base = rss_mib()
    if mode == "engine":
        eng = open_engine(model, adapters)
        prompt = eng.tokenize(eng.render_chat([{"role": "user", "content": "hi"}]))
        for name in sorted(eng.adapters):
            eng.complete(prompt, adapter=name, max_tokens=1)
        keep: object = eng
    else:
        keep = [open_llama(model, a) for a in adapters]
        for llm in keep:  # type: ignore[attr-defined]
            llm.create_completion("hi", max_tokens=1, temperature=0.0)
    out = {"rss_mib": rss_mib(), "interpreter_mib": base}
    del keep
    return out


def run_memory(mode: str, model: Path, adapters: list[Path]) -> dict[str, float]:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--model",
        str(model),
        "--threads",
        str(_THREADS[0]),
        "--gpu-layers",
        str(_GPU[0]),
    ]
    for a in adapters:
        cmd += ["--adapter", str(a)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- report --------------------------------------------------------------------------------------


def machine_info() -> list[str]:
    import llama_cpp

    from macaron_local.engine import _lcpp

    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"python {platform.python_version()}  llama-cpp-python {llama_cpp.__version__}  "
        f"cpus {os.cpu_count()} ({cpu})  loadavg {load}",
        f"llama.cpp system_info: {_lcpp.system_info().strip()}",
        f"threads gen/batch: {threads()} for both sides; engine n_ctx {ENGINE_CTX} (one "
        f"resident KV sequence, other slots parked as state snapshots); each Llama n_ctx "
        f"{LLAMA_CTX}; adapters: the shipped {', '.join(a.name for a in shipped_adapters())}",
    ]


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def table(sw: dict, rl: dict, mem: dict, dec: dict, st: dict) -> list[str]:
    rows = [("figure", "ours", "baseline", "ratio", "target", "")]

    def ms(x: float) -> str:
        return f"{x * 1000:.1f} ms"

    r1 = rl["reload_s"] / sw["switch_s"]
    rows.append(
        (
            "switch only: switch cost vs Llama(lora_path) reload",
            ms(sw["switch_s"]),
            ms(rl["reload_s"]),
            f"{r1:.0f}x cheaper",
            ">= 20x",
            verdict(r1 >= 20),
        )
    )
    r1r = rl["reload_s"] / sw["switch_raw_s"]
    rows.append(
        (
            "switch only, raw 1-token request vs reload",
            ms(sw["switch_raw_s"]),
            ms(rl["reload_s"]),
            f"{r1r:.1f}x cheaper",
            ">= 20x",
            verdict(r1r >= 20),
        )
    )
    r2 = rl["reload_ready_s"] / sw["switch_raw_s"]
    rows.append(
        (
            "switch + ready to answer the view (1st token)",
            ms(sw["switch_raw_s"]),
            ms(rl["reload_ready_s"]),
            f"{r2:.0f}x cheaper",
            ">= 20x",
            verdict(r2 >= 20),
        )
    )
    rows.append(
        ("  (same-adapter 1-token request, subtracted above)", ms(sw["same_s"]), "", "", "", "")
    )
    e, b = mem["engine"], mem["llama4"]
    r3 = e["rss_mib"] / b["rss_mib"]
    rows.append(
        (
            f"RSS: engine 4 adapters n_ctx {ENGINE_CTX} vs 4 x Llama n_ctx {LLAMA_CTX}",
            f"{e['rss_mib']:.0f} MiB",
            f"{b['rss_mib']:.0f} MiB",
            f"{r3:.2f}x",
            "<= 0.45x",
            verdict(r3 <= 0.45),
        )
    )
    de = e["rss_mib"] - e["interpreter_mib"]
    db = b["rss_mib"] - b["interpreter_mib"]
    rows.append(
        (
            "  RSS above the interpreter (imports done)",
            f"{de:.0f} MiB",
            f"{db:.0f} MiB",
            f"{de / db:.2f}x",
            "",
            "",
        )
    )
    r4 = dec["ours_tps"] / dec["theirs_tps"]
    rows.append(
        (
            f"decode tok/s, adapter active, greedy {DECODE_TOKENS}",
            f"{dec['ours_tps']:.1f}",
            f"{dec['theirs_tps']:.1f}",
            f"{r4:.2f}x",
            ">= 0.95x",
            verdict(r4 >= 0.95),
        )
    )
    r5 = st["reuse_n"] / st["full_n"]
    rows.append(
        (
            f"2nd turn: tokens evaluated (view {st['n_prompt']} tok)",
            f"{st['reuse_n']:.0f}",
            f"{st['full_n']:.0f}",
            f"{r5:.2f}x",
            "lower is better",
            "",
        )
    )
    r6 = st["reuse_s"] / st["full_s"]
    rows.append(
        (
            "2nd turn: prompt processing time",
            ms(st["reuse_s"]),
            ms(st["full_s"]),
            f"{r6:.2f}x ({1 / r6:.1f}x faster)",
            "lower is better",
            "",
        )
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="llama.cpp threads (generation and prompt) for both sides (default: the "
        "engine's own counts, half the cores and all but one)",
    )
    ap.add_argument(
        "--gpu-layers",
        type=int,
        default=0,
        help="layers offloaded to the GPU on both sides (-1: all; needs a GPU build)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--adapter", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    _THREADS[0] = args.threads
    _GPU[0] = args.gpu_layers
    if args.child:
        adapters = [Path(a) for a in args.adapter]
        print(json.dumps(child_memory(args.child, Path(args.model), adapters)))
        return 0

    from macaron_local.manifests import embedded_model_file

    reps = 2 if args.quick else 5
    model = embedded_model_file()
    print("\n".join(machine_info()), flush=True)
    adapters = shipped_adapters()
    mem = {m: run_memory(m, model, adapters) for m in ("engine", "llama4")}
    eng = open_engine(model, adapters)
    try:
        v = views(eng)
        print(
            f"view {len(v['view'])} tokens; decode prompt {len(v['decode'])} tokens; "
            f"{reps} repetitions",
            flush=True,
        )
        sw = bench_switch(eng, v["view"], reps)
        rl = bench_reload(model, adapters, v["view"], reps)
        dec = bench_decode(eng, model, adapters[0], v["decode"], reps)
        st = bench_second_turn(eng, reps)
    finally:
        eng.close()
    print()
    print("\n".join(table(sw, rl, mem, dec, st)))
    print()
    print(
        f"notes: baseline Llama keeps llama-cpp-python defaults except n_ctx/threads "
        f"(flash_attn_type={dec['llama_flash_attn_type']}, lora_path forces mmap off); "
        f"engine flash attention is llama.cpp's AUTO. decode generated "
        f"{dec['ours_n']} (ours) / {dec['theirs_n']} (baseline) tokens; tok/s = (n-1) / "
        f"(T(n) - T(1)) with the prompt's KV kept, so prompt evaluation is excluded on both "
        f"sides. Switch: medians of {sw['n']} requests; reload: {rl['n']} reloads."
    )
    checks = (
        ("switch", rl["reload_s"] / sw["switch_s"] >= 20),
        ("memory", mem["engine"]["rss_mib"] / mem["llama4"]["rss_mib"] <= 0.45),
        ("decode", dec["ours_tps"] / dec["theirs_tps"] >= 0.95),
    )
    failed = [f for f, ok in checks if not ok]
    print(
        "the engine misses its target on: " + ", ".join(failed)
        if failed
        else "the engine meets every target in this run."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
