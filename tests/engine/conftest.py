"""Engine fixtures: one real engine on the embedded model per module, small adapters made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from macaron_local.engine import Engine, EngineConfig
from macaron_local.engine.gguf_model import inspect_model
from macaron_local.engine.lora_io import write_lora, zero_lora

QV = [f"blk.{i}.attn_{k}.weight" for i in range(30) for k in ("q", "v")]


def make_adapter(
    model_path: Path,
    out: Path,
    *,
    seed: int,
    scale: float,
    rank: int = 4,
    targets: list[str] | None = None,
    **kw: object,
) -> Path:
    shapes = inspect_model(model_path).linear_shapes()
    tensors = zero_lora(shapes, targets or QV, rank, seed=seed, scale=scale)
    return write_lora(out, tensors, alpha=float(rank), **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def adapter_dir(tmp_path_factory: pytest.TempPathFactory, model_path: Path) -> Path:
    d = tmp_path_factory.mktemp("adapters")
    make_adapter(model_path, d / "zero.gguf", seed=1, scale=0.0)
    make_adapter(model_path, d / "a.gguf", seed=2, scale=0.05)
    make_adapter(model_path, d / "b.gguf", seed=3, scale=0.05)
    return d


@pytest.fixture(scope="module")
def engine(model_path: Path, adapter_dir: Path):
    eng = Engine(model_path, EngineConfig(n_ctx=2048))
    for name in ("zero", "a", "b"):
        eng.load_adapter(name, adapter_dir / f"{name}.gguf")
    yield eng
    eng.close()


def chat(engine: Engine, *turns: str, system: str = "You are a helpful assistant.") -> str:
    msgs = [{"role": "system", "content": system}]
    for i, t in enumerate(turns):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": t})
    return engine.render_chat(msgs)
