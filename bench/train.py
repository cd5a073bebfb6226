"""Training throughput of one adapter on the routing data (2 CPU cores).

Trains one rank-16 all-linear LoRA on ``models/data/route.jsonl`` (the L0 route prompt) for a
few steps in each mode and prints tokens/s and the time 100 steps would take. Modes:
``bf16`` (autocast, shared prompt prefix: the default), ``bf16-noprefix`` and ``f32`` (the
baseline the ratio is taken against). Nothing is registered; outputs go to a temp folder.

    python bench/train.py --steps 5
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

MODES = {
    "f32": {"bf16": False, "share_prefix": True},
    "bf16": {"bf16": True, "share_prefix": True},
    "bf16-noprefix": {"bf16": True, "share_prefix": False},
}


def steady(res: object) -> tuple[float, float]:
    """Median seconds per step after the first (warmup) step, and the tokens/s it implies."""
    times = sorted(res.step_s[1:] or res.step_s)  # type: ignore[attr-defined]
    per_step = times[len(times) // 2]
    return per_step, res.tokens / res.steps / per_step  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5, help="steps per mode (first one is warmup)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--modes", default="f32,bf16,bf16-noprefix")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    ap.add_argument("--examples", type=int, default=512, help="routing rows sampled")
    args = ap.parse_args()

    import torch

    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.hcp import load_profile
    from macaron_local.manifests import embedded_model_file, get_manifest
    from macaron_local.refine.arch import load_base
    from macaron_local.refine.data import load_jsonl, route_examples
    from macaron_local.refine.train import TrainConfig, train
    from macaron_local.turns.tools import tool_descriptions

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = load_jsonl(Path(__file__).resolve().parents[1] / "models" / "data" / "route.jsonl")
    rows = random.Random(0).sample(rows, min(args.examples, len(rows)))
    examples = route_examples(rows, load_profile("tall-local"), tool_descriptions())
    base = embedded_model_file()
    t0 = time.perf_counter()
    model = load_base(base)
    print(
        f"base loaded in {time.perf_counter() - t0:.1f} s; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads; {len(examples)} routing examples"
    )
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            cfg = TrainConfig(
                rank=args.rank,
                alpha=2 * args.rank,
                steps=args.steps,
                batch_size=args.batch_size,
                max_len=1024,
                **MODES[mode],
            )
            res = train(
                examples,
                model=model,
                tokenizer=shared_tokenizer(base),
                out=Path(tmp) / f"{mode}.gguf",
                label="L0",
                base_sha256=get_manifest().sha256,
                config=cfg,
                progress=True,
            )
            results[mode] = res
    speed = {mode: steady(res) for mode, res in results.items()}
    print(f"\n{'mode':<15}{'tokens/s':>10}{'s/step':>9}{'100 steps':>11}{'vs f32':>8}{'loss':>9}")
    for mode, res in results.items():
        per_step, tps = speed[mode]
        ratio = f"{tps / speed['f32'][1]:.2f}x" if "f32" in speed else "-"
        print(
            f"{mode:<15}{tps:>10.0f}{per_step:>9.2f}"
            f"{per_step * 100 / 60:>9.1f} m{ratio:>8}{res.losses[-1]:>9.3f}"
        )
    first = next(iter(results.values()))
    per_row = first.tokens // max(1, first.steps * args.batch_size)
    print(
        f"\nbatch {args.batch_size} x ~{per_row} tokens, rank {args.rank} on all 7 linears "
        "x 30 layers; median step after the first (warmup)"
    )


if __name__ == "__main__":
    main()
