"""Benchmark: the L1 agent on multi-step personal tasks, REPL composition vs discrete calls.

Run ``python bench/agent.py`` (scripted oracle policies, no model) or add ``--model`` to drive
the real L1 adapter of a profile through the engine (``--profile tall-local``). Every task runs
in a fresh temporary world (``bench/agent_tasks/seed.py``) with a fixed clock; the REPL mode
composes calls in the sandboxed REPL (```repl blocks), the discrete mode calls one tool per
model turn (```call blocks). Prints success rate and model round-trips per task and mode.
The answer scored is the one the app shows: the model's final text through the runtime's
record check (:func:`~macaron_local.agent.truth.truthful`). A **false success claim** is a
task that was not solved whose record contradicts its answer: no tool call succeeded, or the
last one failed, and the shown answer does not say so (no failure, refusal or missing tool in
it): the number that must stay 0. A **wrong answer** is an unsolved task whose calls worked
and whose answer does not admit anything (a wrong result the record cannot contradict).

``python bench/agent.py --repl-timing`` instead times the REPL itself, the old in-process
confinement (``isolation = "in-process"``: rlimits, a network namespace, the audit hook) against
the OS sandbox (bubblewrap + seccomp) in the same run: start-up of a fresh REPL, the round trip
of a trivial block, and of a block that calls one host tool; medians, and new/old ratios.

``--model --compare FILE`` runs every task also with another L1 GGUF (a candidate revision)
in the same process, task by task, and prints the two side by side (``repl`` vs
``repl+FILE-stem``): before vs after in one run.

A benchmark, not a test: it asserts nothing and is never collected by pytest. Writes only to
its temporary folders (and ``--json``).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_tasks.seed import NOW, seed  # noqa: E402
from agent_tasks.tasks import TASKS, C, Task, World  # noqa: E402

from macaron_local.agent.agent_loop import run_agent  # noqa: E402
from macaron_local.agent.repl import Repl  # noqa: E402
from macaron_local.agent.sandbox import SandboxPolicy  # noqa: E402
from macaron_local.agent.tools import ToolContext, ToolGate, ToolRegistry  # noqa: E402
from macaron_local.agent.truth import truthful  # noqa: E402
from macaron_local.plugins.manager import PluginManager  # noqa: E402

Step = Callable[[list[dict[str, str]]], str]
MAX_STEPS = 40
# Independent of truth.py on purpose: an answer that says it did not (fully) do the task.
ADMITS = re.compile(
    r"\b(could ?n[o']t|can ?n[o']t|cannot|unable|failed|did ?n[o']t|was ?n[o']t|not able|"
    r"no tool|not installed|declined|error|sorry|stopped after|nothing was changed)\b",
    re.I,
)


def oracle_step(gen: Generator[Any, Any, str], mode: str) -> Step:
    """Turn a scripted policy into the ``step`` function the agent loop calls."""
    started = False

    def step(messages: list[dict[str, str]]) -> str:
        nonlocal started
        try:
            if not started:
                started = True
                action = next(gen)
            else:
                result = messages[-1]["content"]
                action = gen.send(result if mode == "repl" else _parse(result))
        except StopIteration as stop:
            return str(stop.value)
        if isinstance(action, C):
            return "```call\n" + json.dumps({"tool": action.tool, "args": action.args}) + "\n```"
        return f"```repl\n{action}\n```"

    return step


def _parse(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def model_step(runtime: Any, system: str, adapter: str | None = None) -> Step:
    """The real L1 adapter (or the engine adapter named ``adapter``): the profile's L1 system
    prompt, the episode, greedy decoding."""
    adapter = adapter or runtime.bindings["L1"].adapter
    from macaron_local.engine import Sampling

    def step(messages: list[dict[str, str]]) -> str:
        view = [{"role": "system", "content": system}] + [
            m if m["role"] != "tool" else {"role": "user", "content": "[tool] " + m["content"]}
            for m in messages
        ]
        prompt = runtime.engine.render_chat(view)
        stream = runtime.engine.generate(
            prompt,
            adapter=adapter,
            max_tokens=384,
            sampling=Sampling(temperature=0.0),
            stop=["\n```\n"],
        )
        text = stream.result().text
        return text + "\n```" if text.count("```") == 1 else text

    return step


def run_task(
    task: Task,
    mode: str,
    registry: ToolRegistry,
    make_step: Callable[..., Step],
    root: Path,
    max_steps: int = MAX_STEPS,
    run: str = "",
) -> dict[str, Any]:
    world = World(root / "data", root / "workspace")
    world.workspace.mkdir(parents=True)
    seed(world.data_dir, world.workspace)
    ctx = ToolContext(workspace=world.workspace, data_dir=world.data_dir, clock=lambda: NOW)
    gate = ToolGate(
        registry, allow=["*"], auto_approve=["*"], context=ctx, confirm=lambda tool, args: True
    )
    policy = SandboxPolicy(workspace=str(world.workspace))
    with Repl(policy, gate) as repl:
        step = make_step(task, mode)
        msgs = [{"role": "user", "content": task.request}]
        try:
            out = run_agent(step, msgs, repl if mode == "repl" else None, gate, max_steps=max_steps)
            tools = gate.visible()  # the answer the app shows:
            answer, _ = truthful(
                out.text,
                out.calls,
                request=task.request,
                tools=[s.name for s in tools],
                acting=[s.name for s in tools if s.side_effect],
            )
            ok = out.finished and task.check(answer, world)
            trips, steps = out.round_trips, len(out.calls)
            errors = sum(c.status != "ok" for c in out.calls)
            contradicted = errors == steps or out.calls[-1].status != "ok"
        except Exception as exc:  # noqa: BLE001 - a failing policy fails its task only
            ok, trips, steps, answer, errors = False, 0, 0, f"{type(exc).__name__}: {exc}", 1
            contradicted = True
    unadmitted = not ok and not ADMITS.search(answer)
    return {
        "task": task.id,
        "mode": run or mode,
        "ok": bool(ok),
        "false_claim": unadmitted and contradicted,
        "wrong_answer": unadmitted and not contradicted,
        "round_trips": trips,
        "tool_steps": steps,
        "tool_errors": errors,
        "answer": answer,
    }


def summarise(rows: list[dict[str, Any]], modes: list[str]) -> None:
    by = {(r["task"], r["mode"]): r for r in rows}
    ids = sorted({r["task"] for r in rows}, key=[t.id for t in TASKS].index)
    head = f"{'task':<20}" + "".join(f"{m + ' ok':>9}{m + ' trips':>12}" for m in modes)
    print(head)
    for tid in ids:
        print(
            f"{tid:<20}"
            + "".join(
                f"{'yes' if by[tid, m]['ok'] else 'NO':>9}{by[tid, m]['round_trips']:>12}"
                for m in modes
            )
        )
    print()
    for m in modes:
        rs = [r for r in rows if r["mode"] == m]
        trips = [r["round_trips"] for r in rs]
        print(
            f"{m:>5}: success {sum(r['ok'] for r in rs)}/{len(rs)} "
            f"({100 * sum(r['ok'] for r in rs) / len(rs):.1f}%), false success claims "
            f"{sum(r['false_claim'] for r in rs)}, wrong answers "
            f"{sum(r['wrong_answer'] for r in rs)}, tool steps mean "
            f"{statistics.mean(r['tool_steps'] for r in rs):.2f}, round-trips mean "
            f"{statistics.mean(trips):.2f}, median {statistics.median(trips)}, "
            f"max {max(trips)}, total {sum(trips)}"
        )
    if set(modes) == {"repl", "fc"}:
        tot = {m: sum(r["round_trips"] for r in rows if r["mode"] == m) for m in modes}
        worst = max(ids, key=lambda t: by[t, "fc"]["round_trips"] - by[t, "repl"]["round_trips"])
        print(
            f"round-trip reduction: {tot['fc']} -> {tot['repl']} "
            f"({tot['fc'] / max(tot['repl'], 1):.2f}x); largest on {worst}: "
            f"{by[worst, 'fc']['round_trips']} -> {by[worst, 'repl']['round_trips']}"
        )


def _median_ms(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def repl_timing(registry: ToolRegistry, starts: int, blocks: int) -> dict[str, dict[str, float]]:
    """Start-up and block round trips per isolation mode (medians, milliseconds)."""
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="agent-timing-") as tmp:
        ws = Path(tmp, "workspace")
        ctx = ToolContext(workspace=ws, data_dir=Path(tmp, "data"), clock=lambda: NOW)
        gate = ToolGate(registry, allow=["*"], context=ctx)
        for mode in ("in-process", "os"):
            policy = SandboxPolicy(workspace=str(ws), isolation=mode)  # type: ignore[arg-type]

            def start(policy: SandboxPolicy = policy) -> None:
                with Repl(policy, gate) as repl:
                    repl.run("1")

            with Repl(policy, gate) as repl:
                repl.run("1")  # warm
                row = {
                    "startup_ms": _median_ms(start, starts),
                    "block_ms": _median_ms(lambda r=repl: r.run("x = 1\nx + 1"), blocks),
                    "tool_block_ms": _median_ms(lambda r=repl: r.run("clock.now()"), blocks),
                }
                row["isolation"] = repl.isolation  # type: ignore[assignment]
            out[mode] = row
    return out


def print_timing(rows: dict[str, dict[str, float]]) -> None:
    old, new = rows["in-process"], rows["os"]
    print(f"{'':16}{'in-process':>18}{'os sandbox':>14}{'new/old':>10}")
    print(f"{'isolation':16}{old['isolation']:>18}{new['isolation']:>14}")
    for key in ("startup_ms", "block_ms", "tool_block_ms"):
        print(f"{key:16}{old[key]:>18.2f}{new[key]:>14.2f}{new[key] / old[key]:>9.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["repl", "fc", "both"], default="both")
    ap.add_argument("--model", action="store_true", help="drive the real L1 adapter")
    ap.add_argument("--profile", default="tall-local")
    ap.add_argument(
        "--compare", type=Path, help="with --model: also run every task with this L1 GGUF"
    )
    ap.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    ap.add_argument("--json", type=Path, help="write the per-task rows here")
    ap.add_argument(
        "--max-steps",
        type=int,
        default=MAX_STEPS,
        help="model round-trips before a task counts as failed",
    )
    ap.add_argument(
        "--repl-timing", action="store_true", help="time the REPL (in-process vs OS sandbox)"
    )
    ap.add_argument("--starts", type=int, default=20, help="fresh REPLs timed per mode")
    ap.add_argument("--blocks", type=int, default=300, help="blocks timed per mode")
    args = ap.parse_args(argv)
    modes = ["repl", "fc"] if args.mode == "both" else [args.mode]
    tasks = [t for t in TASKS if not args.tasks or t.id in args.tasks.split(",")]
    manager = PluginManager(entry_points=False, user_dir=Path("/nonexistent"))
    manager.load()
    registry = manager.registry()
    if args.repl_timing:
        timing = repl_timing(registry, args.starts, args.blocks)
        print_timing(timing)
        if args.json:
            args.json.write_text(json.dumps(timing, indent=1))
        return 0
    if args.model:
        from macaron_local.turns.pipeline import Runtime
        from macaron_local.turns.tools import tool_descriptions

        runtime = Runtime.open(args.profile)
        system = runtime.profile.system_prompt("L1", tool_descriptions(registry))
        adapters: dict[str, str | None] = {"": None}
        if args.compare:
            runtime.engine.load_adapter(args.compare.stem + "-compared", args.compare)
            adapters[f"+{args.compare.stem}"] = args.compare.stem + "-compared"

        def make_step(task: Task, mode: str, tag: str = "") -> Step:
            return model_step(runtime, system, adapters[tag])

    else:
        adapters = {"": None}
        make_step = lambda task, mode, tag="": oracle_step(  # noqa: E731
            (task.repl if mode == "repl" else task.fc)(), mode
        )
    rows = []
    for task in tasks:
        for mode in modes:
            for tag in adapters:
                with tempfile.TemporaryDirectory(prefix=f"agent-{task.id}-") as tmp:
                    step = lambda t, m, tag=tag: make_step(t, m, tag)  # noqa: E731
                    rows.append(
                        run_task(task, mode, registry, step, Path(tmp), args.max_steps, mode + tag)
                    )
                r = rows[-1]
                print(  # progress: a model run takes minutes per task
                    f"{r['task']} {r['mode']}: {'ok' if r['ok'] else 'NO'}, "
                    f"{r['tool_steps']} steps, {r['tool_errors']} failed",
                    file=sys.stderr,
                )
    summarise(rows, [m + tag for m in modes for tag in adapters])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
