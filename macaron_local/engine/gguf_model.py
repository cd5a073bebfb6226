"""Inspect a GGUF base model file before llama.cpp sees it.

Owns the checks that turn a bad model file into a named error (missing, not GGUF, truncated,
not a model) and the facts other parts need without loading weights: architecture, context
length, tensor shapes (for adapter checks), chat template. Does not touch llama.cpp.

A full parse of the header costs seconds (the ``gguf`` reader maps every vocabulary entry), so
the result is kept in the cache folder per (path, size, mtime): a changed or truncated file has
a new key and is checked again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from macaron_local import paths
from macaron_local.errors import ModelFormatError, ModelNotFoundError

if TYPE_CHECKING:
    from gguf import ReaderField

GGUF_MAGIC = b"GGUF"

# a scalar or string GGUF metadata value (arrays are not read)
FieldValue: TypeAlias = str | int | float | bool | None


@dataclass(frozen=True)
class ModelInfo:
    """What the engine and the refine pipeline need to know about a base model file."""

    path: Path
    arch: str
    context_length: int
    n_layer: int
    chat_template: str | None
    tensor_shapes: dict[str, tuple[int, ...]]  # numpy order: (out, in) for matrices

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """The 2-D weight tensors a LoRA may target, name -> (out, in)."""
        return {
            n: (s[0], s[1])
            for n, s in self.tensor_shapes.items()
            if len(s) == 2 and n.startswith("blk.") and n.endswith(".weight")
        }


def inspect_model(path: Path | str) -> ModelInfo:
    """Read and check the header of a GGUF model; raise a named error for a bad file."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ModelNotFoundError(f"model file not found: {path}", path=path)
    st = path.stat()
    return _cached(path, st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=8)
def _cached(path: Path, size: int, mtime: int) -> ModelInfo:
    key = hashlib.sha256(f"{path}|{size}|{mtime}".encode()).hexdigest()[:32]
    file = paths.cache_dir() / "model-info" / f"{key}.json"
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        raw["tensor_shapes"] = {k: tuple(v) for k, v in raw["tensor_shapes"].items()}
        return ModelInfo(**{**raw, "path": path})
    except (OSError, ValueError, TypeError, KeyError):
        pass  # not cached yet, or an unreadable entry: parse the file
    info = _inspect(path)
    try:
        paths.ensure(file.parent)
        tmp = file.with_suffix(f".{os.getpid()}.tmp")  # processes may race: each its own
        tmp.write_text(json.dumps({**asdict(info), "path": str(path)}), encoding="utf-8")
        tmp.replace(file)
    except OSError:
        pass  # a read-only cache folder only costs the next start the parse again
    return info


def _inspect(path: Path) -> ModelInfo:
    import gguf

    if not path.is_file():
        raise ModelNotFoundError(f"model file not found: {path}", path=path)
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != GGUF_MAGIC:
        raise ModelFormatError(
            f"{path.name} is not a GGUF file (starts with {magic!r}, expected b'GGUF')", path=path
        )
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:
        raise ModelFormatError(f"{path.name} is truncated or corrupt ({exc})", path=path) from exc
    size = path.stat().st_size
    end = max((int(t.data_offset) + int(t.n_bytes) for t in reader.tensors), default=0)
    if end > size:
        raise ModelFormatError(
            f"{path.name} is truncated: tensors need {end} bytes, the file has {size}", path=path
        )
    fields = {name: field_value(f) for name, f in reader.fields.items()}
    if fields.get("general.type") not in (None, "model"):
        raise ModelFormatError(
            f"{path.name} is a {fields.get('general.type')!r} file, not a model", path=path
        )
    arch = str(fields.get("general.architecture") or "")
    if not arch:
        raise ModelFormatError(f"{path.name} has no general.architecture", path=path)
    return ModelInfo(
        path=path,
        arch=arch,
        context_length=int(fields.get(f"{arch}.context_length") or 0),
        n_layer=int(fields.get(f"{arch}.block_count") or 0),
        chat_template=_text(fields.get("tokenizer.chat_template")),
        tensor_shapes={
            t.name: tuple(int(x) for x in reversed(t.shape.tolist())) for t in reader.tensors
        },
    )


def field_value(f: ReaderField) -> FieldValue:
    """Decode a scalar or string GGUF metadata field (arrays come back as None)."""
    import gguf

    if not f.types or f.types[0] == gguf.GGUFValueType.ARRAY:
        return None
    part = f.parts[f.data[0]]
    if f.types[0] == gguf.GGUFValueType.STRING:
        return bytes(part).decode("utf-8", errors="replace")
    value = part.tolist()[0]
    return value if isinstance(value, str | int | float | bool) else None


def _text(value: FieldValue) -> str | None:
    return value if isinstance(value, str) else None
