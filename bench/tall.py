"""The Tall edition on a real second architecture: Qwen2.5-Coder-0.5B (qwen2), end to end.

Run ``python bench/tall.py [--l0-steps 40] [--limit 80] [--file bench/eval/route_eval_d.jsonl]
[--l2-steps 30] [--code-limit 20] [--skip-steps]``.
In a temporary ``MACARON_HOME`` it registers the 0.5B fixture (``tests/tall_fixture.py``) with
``macaron models add``, makes a profile for it with ``macaron hcp new``, and prints, in one run:

- per training backend, seconds per step and peak memory of a few LoRA steps (GGUF-space torch
  on the 135M default, transformers + peft on the same 135M and on the 0.5B), each in its own
  process, with the plan's memory estimate and the ratio measured / estimated;
- routing accuracy on a clean evaluation set: the 135M default with its shipped L0, the 0.5B
  with its base weights alone, and (unless ``--l0-steps 0``) the 0.5B with an L0 that
  ``macaron refine bootstrap --profile`` trained for it, as ratios against the 135M;
- the same three columns for L2 on the executed code tasks (``bench/eval/code_tasks.jsonl``,
  ``--code-limit`` of them, spread evenly; each answer's first python block run against the
  task's tests), the 0.5B's own L2 trained with ``--l2-steps`` (``0`` skips that column).

A benchmark, not a test: it asserts nothing and pytest never collects it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def steps_child(base: str, backend: str, steps: int) -> None:
    """In a fresh process: load ``base`` with ``backend``, run LoRA steps, print one JSON line."""
    import torch

    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.refine.arch import build
    from macaron_local.refine.data import load_jsonl
    from macaron_local.refine.hf import HFBase
    from macaron_local.refine.lora import attach_lora
    from macaron_local.refine.plan import plan
    from macaron_local.refine.train import TrainConfig, collate, encode_all, loss_on_targets
    from macaron_local.refine.weights import read_weights

    path = Path(base)
    arch = "llama" if backend == "gguf-torch" else _arch(path)
    cfg = TrainConfig(batch_size=4, max_len=256, rank=8, alpha=16)
    t0 = time.perf_counter()
    model = build(read_weights(path)) if backend == "gguf-torch" else HFBase.load(path, arch)
    load_s = time.perf_counter() - t0
    tok = shared_tokenizer(path)
    rows = load_jsonl(ROOT / "models" / "data" / "chat.jsonl")[:16]
    enc = encode_all(tok, rows, cfg.max_len)
    attach_lora(model, cfg.lora())
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4)
    times = []
    for i in range(steps):
        tokens, targets = collate(enc[(i * 4) % len(enc) :][:4])
        t = time.perf_counter()
        loss = loss_on_targets(model, tokens, targets, cfg.bf16)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    p = plan(path, arch if backend != "gguf-torch" else "llama", cfg, steps=steps)
    print(json.dumps({
        "backend": backend, "base": path.name, "load_s": round(load_s, 1),
        "s_per_step": round(statistics.median(times[1:] or times), 2),
        "peak_gib": round(peak / 2**30, 2), "plan_gib": round(p.memory_bytes / 2**30, 2),
    }))  # fmt: skip


def _arch(path: Path) -> str:
    from macaron_local.engine.gguf_model import inspect_model

    return inspect_model(path).arch


def backend_table(small: Path, qwen: Path, steps: int) -> list[dict[str, object]]:
    out = []
    for base, backend in ((small, "gguf-torch"), (small, "hf"), (qwen, "hf")):
        done = subprocess.run(
            [sys.executable, __file__, "--_steps", str(base), backend, str(steps)],
            capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
        )  # fmt: skip
        line = [x for x in done.stdout.splitlines() if x.startswith("{")]
        out.append(
            json.loads(line[-1]) if line else {"backend": backend, "error": done.stderr[-300:]}
        )
    return out


def route_accuracy(profile: str, items: list[dict[str, str]]) -> float:
    from route_eval import metrics, route_all

    return float(metrics(route_all(profile, items, quiet=True))["accuracy"])


def code_pass(profile: str, tasks: list[dict[str, object]]) -> float:
    """Share of ``tasks`` whose tests pass, answered by ``profile``'s L2 (or its base weights
    where it binds none) through a real runtime, as ``bench/adapters.py`` measures it."""
    from adapters import EVAL, _load, eval_code

    from macaron_local.turns.pipeline import Runtime

    checker = _load(EVAL / "check_code_tasks.py", "check_code_tasks")
    with tempfile.TemporaryDirectory(prefix="tall-code-") as tmp:
        rt = Runtime.open(profile, db_path=Path(tmp) / "eval.db")
        try:
            l2 = rt.bindings.get("L2")
            adapter = l2.adapter if l2 else None
            return 100 * eval_code(rt.engine, rt.profile, rt.tools, tasks, adapter, checker)
        finally:
            rt.close()


def bootstrap_label(profile: str, label: str, steps: int) -> None:
    subprocess.run(
        ["macaron", "refine", "bootstrap", "--profile", profile, "--labels", label,
         "--steps", str(steps), "--batch-size", "4", "--max-len", "512", "--quiet"],
        check=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--_steps", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--l0-steps", type=int, default=40, help="bootstrap steps for the 0.5B's L0")
    ap.add_argument("--limit", type=int, default=80, help="requests of the evaluation set")
    ap.add_argument("--file", type=Path, default=ROOT / "bench" / "eval" / "route_eval_d.jsonl")
    ap.add_argument("--step-runs", type=int, default=3, help="LoRA steps per backend")
    ap.add_argument("--l2-steps", type=int, default=30, help="bootstrap steps for its L2")
    ap.add_argument("--code-limit", type=int, default=20, help="executed code tasks")
    ap.add_argument("--skip-steps", action="store_true", help="no backend table")
    args = ap.parse_args(argv)
    if args._steps:
        steps_child(args._steps[0], args._steps[1], int(args._steps[2]))
        return 0
    from tests.tall_fixture import qwen2_gguf

    qwen = qwen2_gguf()
    home = tempfile.mkdtemp(prefix="tall-bench-")
    os.environ["MACARON_HOME"] = home
    from macaron_local.hcp.new import new_profile
    from macaron_local.manifests import embedded_model_file
    from macaron_local.model_manager.add import add_model

    add_model(qwen, "qwen2-05b")
    new_profile("qwen05", "qwen2-05b")
    print(f"{'backend':<18} {'base':<38} load s  s/step  peak GiB  plan GiB  peak/plan")
    table = [] if args.skip_steps else backend_table(embedded_model_file(), qwen, args.step_runs)
    for r in table:
        if "error" in r:
            print(f"{r['backend']:<18} failed: {r['error']}")
            continue
        ratio = r["peak_gib"] / r["plan_gib"]  # type: ignore[operator]
        print(f"{r['backend']:<18} {r['base']:<38} {r['load_s']:>6} {r['s_per_step']:>7} "
              f"{r['peak_gib']:>9} {r['plan_gib']:>9} {ratio:>10.2f}")  # fmt: skip
    from route_eval import load_items

    items = load_items(args.file, None, spread=args.limit)  # spread evenly: the sets are grouped
    rows = [("135M default + shipped L0", route_accuracy("tall-local", items))]
    rows.append(("0.5B qwen2, base weights", route_accuracy("qwen05", items)))
    if args.l0_steps:
        bootstrap_label("qwen05", "L0", args.l0_steps)
        rows.append(
            (f"0.5B qwen2 + its L0 ({args.l0_steps} steps)", route_accuracy("qwen05", items))
        )
    print(f"\nrouting accuracy on {len(items)} requests of {args.file.name}", flush=True)
    for name, acc in rows:
        print(f"  {name:<36} {acc:5.1f}%   ratio to the 135M {acc / rows[0][1]:.2f}x")
    if args.code_limit:
        from adapters import rows as eval_rows

        tasks = eval_rows("code_tasks.jsonl", args.code_limit)
        code = [("135M default + shipped L2", code_pass("tall-local", tasks))]
        code.append(("0.5B qwen2, base weights", code_pass("qwen05", tasks)))
        if args.l2_steps:
            bootstrap_label("qwen05", "L2", args.l2_steps)
            trained = f"0.5B qwen2 + its L2 ({args.l2_steps} steps)"
            code.append((trained, code_pass("qwen05", tasks)))
        print(f"\nL2: executed code tasks passed, {len(tasks)} of code_tasks.jsonl")
        for name, acc in code:
            ratio = f"{acc / code[0][1]:.2f}x" if code[0][1] else "n/a (135M passed none)"
            print(f"  {name:<36} {acc:5.1f}%   ratio to the 135M {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
