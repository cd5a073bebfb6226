"""Every bad model or adapter file gives its own error naming the file; others keep working."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from macaron_local.engine import Engine, EngineConfig
from macaron_local.engine.gguf_model import inspect_model
from macaron_local.engine.lora_io import read_lora, write_lora, zero_lora
from macaron_local.errors import (
    AdapterFormatError,
    AdapterMismatchError,
    ModelFormatError,
    ModelNotFoundError,
)
from macaron_local.manifests import verify

from .conftest import QV, make_adapter


def test_missing_model(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="nothing.gguf"):
        Engine(tmp_path / "nothing.gguf")


def test_not_a_gguf_model(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("these are my notes, not a model")
    with pytest.raises(ModelFormatError, match="not a GGUF"):
        Engine(bad)


def test_truncated_model(tmp_path: Path, model_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    with model_path.open("rb") as src, cut.open("wb") as dst:
        dst.write(src.read(20_000_000))
    with pytest.raises(ModelFormatError, match="truncated"):
        Engine(cut)


def test_checksum_mismatch_names_the_file(tmp_path: Path, model_path: Path) -> None:
    copy = tmp_path / "copy.gguf"
    shutil.copyfile(model_path, copy)
    with copy.open("r+b") as fh:
        fh.seek(50_000_000)
        fh.write(b"\xff" * 16)
    with pytest.raises(ModelFormatError, match="copy.gguf"):
        verify(copy, "0" * 64, copy.stat().st_size)


def test_adapter_for_another_architecture(tmp_path: Path, model_path: Path, engine: Engine) -> None:
    path = make_adapter(model_path, tmp_path / "qwen.gguf", seed=4, scale=0.1, arch="qwen2")
    with pytest.raises(AdapterMismatchError, match="qwen2"):
        engine.load_adapter("qwen", path)


def test_adapter_with_wrong_shapes(tmp_path: Path, model_path: Path, engine: Engine) -> None:
    shapes = {k: (v[0], v[1] * 2) for k, v in inspect_model(model_path).linear_shapes().items()}
    path = write_lora(tmp_path / "wide.gguf", zero_lora(shapes, QV[:2], 4), alpha=4)
    with pytest.raises(AdapterMismatchError, match="blk.0.attn_q.weight"):
        engine.load_adapter("wide", path)


def test_adapter_for_another_base(tmp_path: Path, model_path: Path, engine: Engine) -> None:
    path = make_adapter(
        model_path,
        tmp_path / "other.gguf",
        seed=5,
        scale=0.1,
        metadata={"macaron.base_sha256": "ab" * 32},
    )
    with pytest.raises(AdapterMismatchError, match="trained on base"):
        engine.load_adapter("other", path, base_sha256="cd" * 32)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "model-file"])
def test_corrupt_adapter(
    tmp_path: Path, adapter_dir: Path, model_path: Path, engine: Engine, damage: str
) -> None:
    bad = tmp_path / f"{damage}.gguf"
    if damage == "garbage":
        bad.write_bytes(b"GGUF" + b"\x00\x01" * 100)
    elif damage == "truncated":
        data = (adapter_dir / "a.gguf").read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    else:
        bad.symlink_to(model_path)
    with pytest.raises(AdapterFormatError, match=bad.name):
        engine.load_adapter(damage, bad)


def test_bad_adapter_does_not_take_the_others_down(
    tmp_path: Path, adapter_dir: Path, model_path: Path
) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a lora")
    with Engine(model_path, EngineConfig(n_ctx=512)) as eng:
        errors = eng.load_adapters({"good": adapter_dir / "a.gguf", "bad": bad})
        assert set(errors) == {"bad"} and isinstance(errors["bad"], AdapterFormatError)
        assert set(eng.adapters) == {"good"}
        assert eng.complete("Hello", adapter="good", max_tokens=3).n_generated >= 1


def test_lora_round_trip_is_lossless(tmp_path: Path, model_path: Path) -> None:
    shapes = inspect_model(model_path).linear_shapes()
    tensors = zero_lora(shapes, QV[:4], 8, seed=9, scale=0.3)
    path = write_lora(tmp_path / "rt.gguf", tensors, alpha=16, metadata={"macaron.label": "L2"})
    back = read_lora(path)
    assert back.alpha == 16 and back.rank == 8 and back.arch == "llama"
    assert back.metadata["macaron.label"] == "L2"
    for name, (a, b) in tensors.items():
        assert (back.tensors[name][0] == a).all() and (back.tensors[name][1] == b).all()


def test_vocab_only_tokenizer_matches_the_engine(
    model_path: Path, engine: Engine, tmp_path: Path
) -> None:
    from macaron_local.engine.tokenizer import Tokenizer

    tok = Tokenizer(model_path)  # llama.cpp vocab-only load: no Python GGUF header parse
    msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi there"}]
    assert tok.render_chat(msgs) == engine.render_chat(msgs)
    assert tok.tokenize(tok.render_chat(msgs)) == engine.tokenize(engine.render_chat(msgs))
    with pytest.raises(ModelNotFoundError, match="gone.gguf"):
        Tokenizer(tmp_path / "gone.gguf")
