"""Read a GGUF base model's metadata and weights as float32 numpy arrays (and write F32 copies).

Owns dequantization (``gguf.quants.dequantize``: Q4_1/Q8_0/F16/... -> f32) and the orientation
rule: a GGUF tensor with ggml shape ``ne`` becomes a numpy array of shape ``reversed(ne)``, so a
matrix is (out, in) exactly as llama.cpp multiplies it. Nothing here permutes rows: the refine
pipeline works in GGUF tensor space. Must not import torch or llama.cpp.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from macaron_local.engine.gguf_model import field_value
from macaron_local.errors import CancelledError, RefineError

if TYPE_CHECKING:
    from macaron_local.engine.gguf_model import FieldValue

_SKIP_KEYS = ("GGUF.", "general.architecture", "general.file_type")


@dataclass(frozen=True)
class GGUFWeights:
    """A base model read from GGUF: scalar/string metadata and f32 tensors by GGUF name."""

    path: Path
    arch: str
    fields: dict[str, FieldValue]
    tensors: dict[str, np.ndarray]

    def field(self, key: str, default: FieldValue = None) -> FieldValue:
        """``<arch>.<key>`` when present, else ``key`` itself, else ``default``."""
        return self.fields.get(f"{self.arch}.{key}", self.fields.get(key, default))

    def number(self, key: str, default: float | None = None) -> float:
        """A numeric :meth:`field`; one that is absent (without a default) or not a number is a
        :class:`RefineError` naming the file."""
        value = self.field(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RefineError(f"{self.path.name}: {key} is {value!r}, not a number")
        return value


def read_weights(path: Path | str, *, stop_if: Callable[[], bool] | None = None) -> GGUFWeights:
    """Read every tensor of the GGUF at ``path`` as float32 (4 s for the 135M Q4_1 base).
    ``stop_if`` is asked before each tensor: once it is true, :class:`CancelledError`."""
    import gguf

    path = Path(path)
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # gguf raises ValueError/struct.error on garbage
        raise RefineError(f"cannot read {path.name} as GGUF ({exc})") from exc
    fields: dict[str, FieldValue] = {}
    for name, f in reader.fields.items():
        value = field_value(f)  # None for arrays
        if value is not None:
            fields[name] = value
    tensors: dict[str, np.ndarray] = {}
    for t in reader.tensors:
        if stop_if is not None and stop_if():
            raise CancelledError(f"stopped while reading {path.name}")
        shape = tuple(int(x) for x in reversed(t.shape.tolist()))
        data = gguf.quants.dequantize(t.data, t.tensor_type)
        tensors[t.name] = np.ascontiguousarray(data, dtype=np.float32).reshape(shape)
    arch = str(fields.get("general.architecture") or "")
    if not arch:
        raise RefineError(f"{path.name} has no general.architecture")
    return GGUFWeights(path=path, arch=arch, fields=fields, tensors=tensors)


def write_f32_copy(src: Path | str, dst: Path | str, weights: GGUFWeights | None = None) -> Path:
    """Write ``src`` again with every tensor dequantized to F32 (same metadata and tokenizer).

    An F32 base lets llama.cpp and torch agree to float precision (parity tests); it is about
    5x the size of a Q4_1 file. ``weights`` (already read from ``src``) saves dequantizing twice.
    """
    import gguf

    src, dst = Path(src), Path(dst)
    reader = gguf.GGUFReader(str(src))
    arch = str(reader.fields["general.architecture"].contents())
    tmp = dst.with_name(dst.name + ".part")
    writer = gguf.GGUFWriter(str(tmp), arch=arch)
    for name, f in reader.fields.items():
        if name.startswith(_SKIP_KEYS) or not f.types:
            continue
        sub = f.types[1] if f.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, f.contents(), f.types[0], sub_type=sub)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for t in reader.tensors:
        if weights is not None:
            data = weights.tensors[t.name]
        else:
            shape = tuple(int(x) for x in reversed(t.shape.tolist()))
            data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        writer.add_tensor(t.name, np.ascontiguousarray(data, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(dst)
    return dst
