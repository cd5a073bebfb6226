"""GGUF LoRA adapter files: write, read and check them against a base model.

Owns the on-disk LoRA format that llama.cpp loads (``general.type=adapter``,
``adapter.type=lora``, ``adapter.lora.alpha``; tensors ``<base tensor>.lora_a`` shaped
(rank, in) and ``<base tensor>.lora_b`` shaped (out, rank), numpy order). The refine pipeline
exports through :func:`write_lora`; the engine checks every adapter with :func:`check_lora`
before llama.cpp sees it, so a bad file gives a named error instead of a refused load.
Does not touch llama.cpp.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from macaron_local.engine.gguf_model import field_value
from macaron_local.errors import AdapterFormatError, AdapterMismatchError

BASE_SHA_KEY = "macaron.base_sha256"
LABEL_KEY = "macaron.label"
REVISION_KEY = "macaron.revision"
_DTYPES = {"f32": np.float32, "f16": np.float16}


@dataclass(frozen=True)
class LoraFile:
    """A LoRA adapter read back from GGUF. ``tensors`` maps base tensor name -> (A, B)."""

    path: Path
    arch: str
    alpha: float
    tensors: dict[str, tuple[np.ndarray, np.ndarray]]
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return int(next(iter(self.tensors.values()))[0].shape[0])

    @property
    def targets(self) -> list[str]:
        return sorted(self.tensors)

    @property
    def base_sha256(self) -> str | None:
        return self.metadata.get(BASE_SHA_KEY)


def write_lora(
    path: Path | str,
    tensors: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    alpha: float,
    arch: str = "llama",
    dtype: str = "f32",
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write ``tensors`` (base name -> (A (r, in), B (out, r))) as a GGUF LoRA at ``path``.

    ``metadata`` adds string keys (e.g. :data:`BASE_SHA_KEY`). The file is written to a temporary
    name and renamed, so a crash never leaves a half-written adapter under the final name.
    """
    import gguf

    if not tensors:
        raise AdapterFormatError("a LoRA adapter needs at least one tensor pair", path=path)
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    writer = gguf.GGUFWriter(str(tmp), arch=arch)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
    for key, value in (metadata or {}).items():
        writer.add_string(key, str(value))
    np_dtype = _DTYPES[dtype]
    for name, (a, b) in sorted(tensors.items()):
        _check_pair(name, np.asarray(a), np.asarray(b), path)
        writer.add_tensor(f"{name}.lora_a", np.ascontiguousarray(a, dtype=np_dtype))
        writer.add_tensor(f"{name}.lora_b", np.ascontiguousarray(b, dtype=np_dtype))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(path)
    return path


def _check_pair(name: str, a: np.ndarray, b: np.ndarray, path: Path) -> None:
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[1]:
        raise AdapterFormatError(
            f"{name}: lora_a {a.shape} and lora_b {b.shape} do not form (r, in) x (out, r)",
            path=path,
        )


def read_lora(path: Path | str) -> LoraFile:
    """Read a GGUF LoRA into numpy arrays; raises :class:`AdapterFormatError` naming the file."""
    import gguf

    path = Path(path)
    if not path.is_file():
        raise AdapterFormatError(f"adapter file not found: {path}", path=path)
    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # gguf raises ValueError/struct.error/IndexError on garbage
        raise AdapterFormatError(
            f"{path.name} is not a readable GGUF file ({exc})", path=path
        ) from exc
    meta = {name: field_value(f) for name, f in reader.fields.items()}
    if meta.get("general.type") != "adapter" or meta.get("adapter.type") != "lora":
        raise AdapterFormatError(
            f"{path.name} is not a LoRA adapter (general.type={meta.get('general.type')!r}, "
            f"adapter.type={meta.get('adapter.type')!r})",
            path=path,
        )
    halves: dict[str, dict[str, np.ndarray]] = {}
    for t in reader.tensors:
        base, _, half = t.name.rpartition(".")
        if half not in ("lora_a", "lora_b"):
            raise AdapterFormatError(f"{path.name}: unexpected tensor {t.name}", path=path)
        shape = tuple(int(x) for x in reversed(t.shape.tolist()))
        halves.setdefault(base, {})[half] = np.array(t.data, dtype=np.float32).reshape(shape)
    tensors = {}
    for base, pair in halves.items():
        if set(pair) != {"lora_a", "lora_b"}:
            raise AdapterFormatError(f"{path.name}: {base} has only {sorted(pair)}", path=path)
        _check_pair(base, pair["lora_a"], pair["lora_b"], path)
        tensors[base] = (pair["lora_a"], pair["lora_b"])
    if not tensors:
        raise AdapterFormatError(f"{path.name} holds no LoRA tensors", path=path)
    return LoraFile(
        path=path,
        arch=str(meta.get("general.architecture", "")),
        alpha=float(meta.get("adapter.lora.alpha") or 0.0),
        tensors=tensors,
        metadata={k: str(v) for k, v in meta.items() if isinstance(v, str | float | int)},
    )


def check_lora(
    lora: LoraFile,
    base_shapes: Mapping[str, tuple[int, int]],
    base_arch: str,
    base_sha256: str | None = None,
) -> None:
    """Raise :class:`AdapterMismatchError` unless ``lora`` fits the base model.

    ``base_shapes`` maps base tensor name -> (out, in). Checks the architecture, that every
    target tensor exists with matching shapes, and, when both are known, the base checksum the
    adapter was trained on.
    """
    name = lora.path.name
    if lora.arch != base_arch:
        raise AdapterMismatchError(
            f"{name} is for architecture {lora.arch!r}, the base model is {base_arch!r}",
            path=lora.path,
        )
    if base_sha256 and lora.base_sha256 and lora.base_sha256 != base_sha256:
        raise AdapterMismatchError(
            f"{name} was trained on base {lora.base_sha256[:12]}…, the loaded base is "
            f"{base_sha256[:12]}…",
            path=lora.path,
        )
    for target, (a, b) in lora.tensors.items():
        if target not in base_shapes:
            raise AdapterMismatchError(f"{name}: base model has no tensor {target}", path=lora.path)
        out_f, in_f = base_shapes[target]
        if a.shape[1] != in_f or b.shape[0] != out_f:
            raise AdapterMismatchError(
                f"{name}: {target} expects in={in_f}, out={out_f} but the adapter has "
                f"lora_a {a.shape}, lora_b {b.shape}",
                path=lora.path,
            )


def zero_lora(
    base_shapes: Mapping[str, tuple[int, int]],
    targets: list[str],
    rank: int,
    seed: int = 0,
    scale: float = 0.0,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """LoRA tensors for ``targets``: random A, B = ``scale`` * random (0 gives an exact no-op)."""
    rng = np.random.default_rng(seed)
    out = {}
    for t in targets:
        out_f, in_f = base_shapes[t]
        a = (rng.standard_normal((rank, in_f)) / np.sqrt(in_f)).astype(np.float32)
        b = (rng.standard_normal((out_f, rank)) * scale).astype(np.float32)
        out[t] = (a, b)
    return out
