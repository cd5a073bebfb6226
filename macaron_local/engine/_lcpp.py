"""Every low-level llama.cpp call macaron-local makes, in one place (llama-cpp-python 0.3.36).

Owns: backend init and log routing, model/context/adapter lifetimes, tokenization, batches and
decode, per-sequence KV removal, logits access and sampler chains (including GBNF validation,
because an invalid grammar segfaults llama.cpp when used). Nothing else in the package imports
``llama_cpp``; the real-model tests guard this module against API drift.

Must not: hold state beyond the pointers it returns, or be called from more than one thread at a
time (the :class:`~macaron_local.engine.engine.Engine` worker thread is its only caller, apart
from vocab-only loads used for tokenizing and grammar checks).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias, cast

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import llama_cpp as L
    from llama_cpp._ctypes_extensions import CtypesArray

    # The opaque pointers llama.cpp hands out; callers hold them and pass them back. llama_cpp
    # declares its functions through an untyped decorator (mypy sees them as Any), so the
    # functions below state what each call returns.
    Model: TypeAlias = L.llama_model_p
    Vocab: TypeAlias = L.llama_vocab_p
    Context: TypeAlias = L.llama_context_p
    Adapter: TypeAlias = ctypes._Pointer[ctypes.c_void_p]  # restype llama_adapter_lora_p_ctypes
    Sampler: TypeAlias = L.llama_sampler_p
    StateBuffer: TypeAlias = CtypesArray[ctypes.c_uint8]
else:
    L = None  # bound to the llama_cpp module by lib(), on the first call

_init_lock = threading.Lock()
_LOG_CB = None  # keep the ctypes callback alive


def lib() -> ModuleType:
    """Import llama_cpp lazily (it loads native libraries) and initialise the backend once.

    Binds the module to this module's ``L``, which every function below calls through.
    """
    global L, _LOG_CB
    with _init_lock:
        if L is None:
            import llama_cpp

            if not os.environ.get("MACARON_LLAMA_VERBOSE"):
                _LOG_CB = llama_cpp.llama_log_callback(lambda level, text, user: None)
                llama_cpp.llama_log_set(_LOG_CB, ctypes.c_void_p(0))
            llama_cpp.llama_backend_init()
            L = llama_cpp
    return L


def system_info() -> str:
    lib()
    return cast(bytes, L.llama_print_system_info()).decode("utf-8", errors="replace")


def supports_gpu_offload() -> bool:
    lib()
    return bool(L.llama_supports_gpu_offload())


@dataclass(frozen=True)
class Device:
    """One ggml compute device and its memory now (bytes)."""

    name: str
    gpu: bool  # a discrete or integrated GPU (or another accelerator), not the host CPU
    free: int
    total: int


def devices() -> list[Device]:
    """The devices this llama.cpp build can use (``ggml_backend_dev_*``, which llama-cpp-python
    does not bind: declared here on its own libggml)."""
    lib()
    from llama_cpp._ggml import libggml as g

    g.ggml_backend_dev_count.restype = ctypes.c_size_t
    g.ggml_backend_dev_get.restype = ctypes.c_void_p
    g.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    g.ggml_backend_dev_name.restype = ctypes.c_char_p
    g.ggml_backend_dev_name.argtypes = [ctypes.c_void_p]
    g.ggml_backend_dev_type.restype = ctypes.c_int
    g.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    size_p = ctypes.POINTER(ctypes.c_size_t)
    g.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, size_p, size_p]
    out = []
    for i in range(int(g.ggml_backend_dev_count())):
        dev = g.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        g.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        name = (g.ggml_backend_dev_name(dev) or b"?").decode("utf-8", errors="replace")
        # enum ggml_backend_dev_type: CPU 0, GPU 1, IGPU 2, ACCEL 3
        out.append(
            Device(name, int(g.ggml_backend_dev_type(dev)) in (1, 2), free.value, total.value)
        )
    return out


def build_has_amx() -> bool:
    """True when this llama.cpp build carries ggml's AMX kernels (they crash on some VMs)."""
    return "AMX" in system_info().upper()


# --- model ---------------------------------------------------------------------------------
# Every function that takes a pointer runs after load_model() (the pointer came from it), so
# only the functions that make something from nothing call lib() first.


def load_model(path: str, *, n_gpu_layers: int = 0, vocab_only: bool = False) -> Model | None:
    """Load a GGUF model with mmap; None when llama.cpp refuses it.

    On CPU the extra buffer types (AMX / repacked weights) are turned off when the build has AMX:
    a native build's AMX kernels segfault on the first decode on CPUs whose cpuid reports AMX
    that the hypervisor does not allow.
    """
    lib()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = n_gpu_layers
    mp.load_mode = L.LLAMA_LOAD_MODE_MMAP
    mp.vocab_only = vocab_only
    if n_gpu_layers == 0 and (build_has_amx() or os.environ.get("MACARON_NO_EXTRA_BUFTS")):
        mp.use_extra_bufts = False
    return cast("Model | None", L.llama_model_load_from_file(path.encode("utf-8"), mp))


def free_model(model: Model) -> None:
    L.llama_model_free(model)


def model_meta(model: Model, key: str) -> str | None:
    buf = ctypes.create_string_buffer(1 << 16)
    n = L.llama_model_meta_val_str(model, key.encode(), buf.raw, len(buf))
    return buf.value.decode("utf-8", errors="replace") if n >= 0 else None


def memory_kind(model: Model) -> str:
    """``"recurrent"`` (Mamba, RWKV: a fixed state per sequence), ``"hybrid"`` (recurrent layers
    beside attention, such as Gated DeltaNet models) or ``"attention"`` (a KV cache only).
    A recurrent state cannot lose the tail of a sequence, so prefixes need checkpoints there."""
    if L.llama_model_is_hybrid(model):
        return "hybrid"
    return "recurrent" if L.llama_model_is_recurrent(model) else "attention"


def chat_template(model: Model) -> str | None:
    raw = L.llama_model_chat_template(model, None)
    return raw.decode("utf-8", errors="replace") if raw else None


def vocab(model: Model) -> Vocab | None:
    return cast("Vocab | None", L.llama_model_get_vocab(model))


def n_vocab(voc: Vocab) -> int:
    return int(L.llama_vocab_n_tokens(voc))


def tokenize(voc: Vocab, text: str, *, add_special: bool, parse_special: bool) -> list[int]:
    data = text.encode("utf-8")
    cap = len(data) + 16
    buf = (L.llama_token * cap)()
    n = L.llama_tokenize(voc, data, len(data), buf, cap, add_special, parse_special)
    if n < 0:
        cap = -n
        buf = (L.llama_token * cap)()
        n = L.llama_tokenize(voc, data, len(data), buf, cap, add_special, parse_special)
    return list(buf[:n])


def token_bytes(voc: Vocab, token: int, *, special: bool = False) -> bytes:
    buf = ctypes.create_string_buffer(64)
    n = L.llama_token_to_piece(voc, token, buf, len(buf), 0, special)
    if n < 0:
        buf = ctypes.create_string_buffer(-n)
        n = L.llama_token_to_piece(voc, token, buf, len(buf), 0, special)
    return buf.raw[:n]


def is_eog(voc: Vocab, token: int) -> bool:
    return bool(L.llama_vocab_is_eog(voc, token))


# --- adapters ------------------------------------------------------------------------------


def load_adapter(model: Model, path: str) -> Adapter | None:
    return cast("Adapter | None", L.llama_adapter_lora_init(model, path.encode("utf-8")))


def free_adapter(adapter: Adapter) -> None:
    L.llama_adapter_lora_free(adapter)


def set_adapter(ctx: Context, adapter: Adapter | None, scale: float = 1.0) -> None:
    """Make ``adapter`` the only active adapter on ``ctx`` (None: plain base model)."""
    if adapter is None:
        rc = L.llama_set_adapters_lora(ctx, None, 0, None)
    else:
        arr = (L.llama_adapter_lora_p_ctypes * 1)(adapter)
        scales = (ctypes.c_float * 1)(scale)
        rc = L.llama_set_adapters_lora(ctx, arr, 1, scales)
    if rc != 0:
        raise RuntimeError(f"llama_set_adapters_lora returned {rc}")


# --- contexts, KV, decode ------------------------------------------------------------------


@dataclass(frozen=True)
class ContextParams:
    n_ctx: int = 4096
    n_batch: int = 512
    n_threads: int = 1  # generation (memory-bound)
    n_threads_batch: int = 2  # prompt processing (compute-bound)
    flash_attn: bool | None = None  # None = llama.cpp's AUTO
    kv_type: str = "f16"  # "f16" | "q8_0" (half the KV memory; needs flash attention) | "f32"
    n_ubatch: int | None = None  # None: n_batch
    offload_kqv: bool = True  # llama.cpp's default; only matters with layers on a GPU
    n_seq: int = 1  # KV sequences, n_ctx / n_seq cells each (not unified)


def new_context(model: Model, p: ContextParams) -> Context | None:
    cp = L.llama_context_default_params()
    cp.n_ctx = p.n_ctx
    cp.n_batch = p.n_batch
    cp.n_ubatch = min(p.n_ubatch or p.n_batch, p.n_batch)
    cp.offload_kqv = p.offload_kqv
    cp.n_seq_max = p.n_seq  # resident sequences; parked slots live as state snapshots
    cp.kv_unified = False  # each sequence its own n_ctx / n_seq cells, attended over alone
    cp.n_threads, cp.n_threads_batch = p.n_threads, p.n_threads_batch
    if p.flash_attn is not None:
        cp.flash_attn_type = 1 if p.flash_attn else 0
    kv = {"f16": L.GGML_TYPE_F16, "q8_0": L.GGML_TYPE_Q8_0, "f32": L.GGML_TYPE_F32}[p.kv_type]
    cp.type_k = cp.type_v = kv
    return cast("Context | None", L.llama_init_from_model(model, cp))


def free_context(ctx: Context) -> None:
    L.llama_free(ctx)


def context_size(ctx: Context) -> int:
    """The cells one sequence may use (the whole context when there is one sequence)."""
    return int(L.llama_n_ctx_seq(ctx))


def seq_remove(ctx: Context, seq: int, p0: int = 0, p1: int = -1) -> bool:
    memory = L.llama_get_memory(ctx)
    return memory is not None and bool(L.llama_memory_seq_rm(memory, seq, p0, p1))


def seq_save(ctx: Context, seq: int) -> StateBuffer:
    """Copy one sequence's KV state (only its used cells) into host memory."""
    n = int(L.llama_state_seq_get_size(ctx, seq))
    buf = (ctypes.c_uint8 * n)()
    got = int(L.llama_state_seq_get_data(ctx, buf, n, seq))
    return buf if got == n else (ctypes.c_uint8 * got).from_buffer_copy(buf, 0)


def seq_restore(ctx: Context, seq: int, buf: StateBuffer | bytes) -> bool:
    """Load a state saved by :func:`seq_save` (or its bytes) into ``seq``; False when it did not
    fit or llama.cpp rejected it."""
    if isinstance(buf, bytes):
        buf = (ctypes.c_uint8 * len(buf)).from_buffer_copy(buf)
    return bool(L.llama_state_seq_set_data(ctx, buf, len(buf), seq))


class Batch:
    """A reusable llama_batch for one sequence at a time."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.raw: L.llama_batch | None = L.llama_batch_init(capacity, 0, 1)

    def _batch(self) -> L.llama_batch:
        if self.raw is None:
            raise RuntimeError("the batch was freed")
        return self.raw

    def fill(self, tokens: Sequence[int], start_pos: int, seq: int, logits_last: bool) -> None:
        b = self._batch()
        n = len(tokens)
        b.n_tokens = n
        for i, tok in enumerate(tokens):
            b.token[i] = tok
            b.pos[i] = start_pos + i  # type: ignore[call-overload]  # stub: llama_pos*, not **
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = 0
        if logits_last and n:
            b.logits[n - 1] = 1

    def fill_all_logits(
        self, tokens: Sequence[int], start_pos: int, seq: int, skip: int = 0
    ) -> None:
        """Logits for every token but the first ``skip``."""
        self.fill(tokens, start_pos, seq, logits_last=False)
        b = self._batch()
        for i in range(skip, len(tokens)):
            b.logits[i] = 1

    def free(self) -> None:
        if self.raw is not None:
            L.llama_batch_free(self.raw)
            self.raw = None


def decode(ctx: Context, batch: Batch) -> int:
    """0 ok, 1 no KV slot (caller may evict and retry), other values are errors."""
    return int(L.llama_decode(ctx, batch._batch()))


def logits(ctx: Context, index: int, n_vocab_: int) -> npt.NDArray[np.float32]:
    ptr = L.llama_get_logits_ith(ctx, index)
    return np.ctypeslib.as_array(ptr, shape=(n_vocab_,)).copy()


def forbid(ctx: Context, index: int, n_vocab_: int, tokens: Iterable[int]) -> None:
    """Make ``tokens`` impossible at ``index`` (their logits -inf, in llama.cpp's own buffer)."""
    view = np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, index), shape=(n_vocab_,))
    view[list(tokens)] = -np.inf


# --- samplers ------------------------------------------------------------------------------


def grammar_sampler(voc: Vocab, gbnf: str, root: str = "root") -> Sampler | None:
    """A grammar sampler, or None when llama.cpp rejects the grammar (never segfaults)."""
    made = L.llama_sampler_init_grammar(voc, gbnf.encode("utf-8"), root.encode("utf-8"))
    return cast("Sampler | None", made or None)


def sampler_chain(
    *,
    temperature: float,
    top_k: int,
    top_p: float,
    min_p: float,
    repeat_penalty: float,
    seed: int,
    n_vocab: int,
    grammar: Sampler | None = None,  # from grammar_sampler(); the chain takes ownership
) -> Sampler:
    lib()
    chain = cast("Sampler", L.llama_sampler_chain_init(L.llama_sampler_chain_default_params()))
    if grammar is not None:
        L.llama_sampler_chain_add(chain, grammar)
    if top_k > 0 and temperature > 0:  # narrow first: penalties over the full vocab are slow
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_top_k(top_k))
    if repeat_penalty and repeat_penalty != 1.0:
        L.llama_sampler_chain_add(
            chain, L.llama_sampler_init_penalties(n_vocab, 64, repeat_penalty, 0.0, 0.0)
        )
    if temperature <= 0:
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_greedy())
        return chain
    if 0 < top_p < 1:
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_top_p(top_p, 1))
    if min_p > 0:
        L.llama_sampler_chain_add(chain, L.llama_sampler_init_min_p(min_p, 1))
    L.llama_sampler_chain_add(chain, L.llama_sampler_init_temp(temperature))
    L.llama_sampler_chain_add(chain, L.llama_sampler_init_dist(seed & 0xFFFFFFFF))
    return chain


def sample(chain: Sampler, ctx: Context, index: int = -1) -> int:
    """Sample from the logits at ``index``; llama_sampler_sample also accepts the token."""
    return int(L.llama_sampler_sample(chain, ctx, index))


def free_sampler(s: Sampler) -> None:
    L.llama_sampler_free(s)
