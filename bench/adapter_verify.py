"""What checking every adapter's sha256 at load costs at start, against loading without it.

Run: OMP_NUM_THREADS=1 python bench/adapter_verify.py [--rounds N]

One engine on the embedded model; each round loads the profile's adapters twice, alternating
the order: ``before`` as the runtime did (``engine.load_adapter`` only) and ``after`` as it does
now (``turns.adapters.load``: sha256 of each file, then the same load). Then one whole
``Runtime.open`` for scale. Prints medians and the ratios measured in this run; never asserts.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from macaron_local.engine import Engine, EngineConfig
from macaron_local.hcp import load_profile
from macaron_local.manifests import get_manifest, verified_path
from macaron_local.turns import adapters
from macaron_local.turns.pipeline import DEFAULT_PROFILE, Runtime


def _before(engine: Engine, bound: dict[str, adapters.Binding], base_sha: str) -> float:
    t = time.perf_counter()
    for b in bound.values():
        if b.adapter and b.path:
            engine.load_adapter(b.adapter, b.path, base_sha256=base_sha)
    return time.perf_counter() - t


def _after(engine: Engine, profile, bound, base_sha: str) -> float:
    t = time.perf_counter()
    served, warnings = adapters.load(engine, profile, bound, base_sha)
    assert not warnings, warnings
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    profile = load_profile(DEFAULT_PROFILE)
    manifest = get_manifest(profile.base.model)
    bound = adapters.resolve(profile, manifest)
    files = [b.path for b in bound.values() if b.path]
    size = sum(p.stat().st_size for p in files)
    engine = Engine(verified_path(profile.base.model), EngineConfig(n_ctx=512, n_threads=1))
    before, after = [], []
    try:
        for i in range(args.rounds):
            runs = [("b", before), ("a", after)] if i % 2 == 0 else [("a", after), ("b", before)]
            for kind, out in runs:
                if kind == "b":
                    out.append(_before(engine, bound, manifest.sha256))
                else:
                    out.append(_after(engine, profile, bound, manifest.sha256))
    finally:
        engine.close()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        Runtime.open(DEFAULT_PROFILE, db_path=Path(tmp) / "m.db").close()
        opened = time.perf_counter() - t
    b, a = statistics.median(before), statistics.median(after)
    print(f"adapters: {len(files)} files, {size / 1e6:.1f} MB; rounds: {args.rounds}")
    print(f"load without sha256 (before): {b * 1000:8.1f} ms")
    print(f"load with sha256    (after):  {a * 1000:8.1f} ms   ratio after/before {a / b:.2f}")
    print(f"sha256 cost: {(a - b) * 1000:.1f} ms = {(a - b) / opened:.1%} of one Runtime.open")
    print(
        f"Runtime.open ({DEFAULT_PROFILE}, with the check): {opened * 1000:.0f} ms; "
        f"start ratio with/without the check {opened / (opened - (a - b)):.3f}"
    )


if __name__ == "__main__":
    main()
