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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_init_lock = threading.Lock()
_initialized = False
_LOG_CB = None  # keep the ctypes callback alive


def lib():  # noqa: ANN201 - the llama_cpp module
    """Import llama_cpp lazily (it loads native libraries) and initialise the backend once."""
    global _initialized, _LOG_CB
    import llama_cpp as L

    with _init_lock:
        if not _initialized:
            if not os.environ.get("MACARON_LLAMA_VERBOSE"):
                _LOG_CB = L.llama_log_callback(lambda level, text, user: None)
                L.llama_log_set(_LOG_CB, ctypes.c_void_p(0))
            L.llama_backend_init()
            _initialized = True
    return L


def system_info() -> str:
    return lib().llama_print_system_info().decode("utf-8", errors="replace")


def build_has_amx() -> bool:
    """True when this llama.cpp build carries ggml's AMX kernels (they crash on some VMs)."""
    return "AMX" in system_info().upper()


# --- model ---------------------------------------------------------------------------------


def load_model(path: str, *, n_gpu_layers: int = 0, vocab_only: bool = False):  # noqa: ANN201
    """Load a GGUF model with mmap; None when llama.cpp refuses it.

    On CPU the extra buffer types (AMX / repacked weights) are turned off when the build has AMX:
    a native build's AMX kernels segfault on the first decode on CPUs whose cpuid reports AMX
    that the hypervisor does not allow.
    """
    L = lib()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = n_gpu_layers
    mp.load_mode = L.LLAMA_LOAD_MODE_MMAP
    mp.vocab_only = vocab_only
    if n_gpu_layers == 0 and (build_has_amx() or os.environ.get("MACARON_NO_EXTRA_BUFTS")):
        mp.use_extra_bufts = False
    return L.llama_model_load_from_file(path.encode("utf-8"), mp)


def free_model(model) -> None:  # noqa: ANN001
    lib().llama_model_free(model)


def model_meta(model, key: str) -> str | None:  # noqa: ANN001
    buf = ctypes.create_string_buffer(1 << 16)
    n = lib().llama_model_meta_val_str(model, key.encode(), buf, len(buf))
    return buf.value.decode("utf-8", errors="replace") if n >= 0 else None


def chat_template(model) -> str | None:  # noqa: ANN001
    raw = lib().llama_model_chat_template(model, None)
    return raw.decode("utf-8", errors="replace") if raw else None


def vocab(model):  # noqa: ANN001, ANN201
    return lib().llama_model_get_vocab(model)


def n_vocab(voc) -> int:  # noqa: ANN001
    return int(lib().llama_vocab_n_tokens(voc))


def tokenize(voc, text: str, *, add_special: bool, parse_special: bool) -> list[int]:  # noqa: ANN001
    L = lib()
    data = text.encode("utf-8")
    cap = len(data) + 16
    buf = (L.llama_token * cap)()
    n = L.llama_tokenize(voc, data, len(data), buf, cap, add_special, parse_special)
    if n < 0:
        cap = -n
        buf = (L.llama_token * cap)()
        n = L.llama_tokenize(voc, data, len(data), buf, cap, add_special, parse_special)
    return list(buf[:n])


def token_bytes(voc, token: int, *, special: bool = False) -> bytes:  # noqa: ANN001
    buf = ctypes.create_string_buffer(64)
    n = lib().llama_token_to_piece(voc, token, buf, len(buf), 0, special)
    if n < 0:
        buf = ctypes.create_string_buffer(-n)
        n = lib().llama_token_to_piece(voc, token, buf, len(buf), 0, special)
    return buf.raw[:n]


def is_eog(voc, token: int) -> bool:  # noqa: ANN001
    return bool(lib().llama_vocab_is_eog(voc, token))


# --- adapters ------------------------------------------------------------------------------


def load_adapter(model, path: str):  # noqa: ANN001, ANN201
    return lib().llama_adapter_lora_init(model, path.encode("utf-8"))


def free_adapter(adapter) -> None:  # noqa: ANN001
    lib().llama_adapter_lora_free(adapter)


def set_adapter(ctx, adapter, scale: float = 1.0) -> None:  # noqa: ANN001
    """Make ``adapter`` the only active adapter on ``ctx`` (None: plain base model)."""
    L = lib()
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


def new_context(model, p: ContextParams):  # noqa: ANN001, ANN201
    L = lib()
    cp = L.llama_context_default_params()
    cp.n_ctx = p.n_ctx
    cp.n_batch = cp.n_ubatch = p.n_batch
    cp.n_seq_max = 1  # one resident sequence; parked slots live as state snapshots
    cp.n_threads, cp.n_threads_batch = p.n_threads, p.n_threads_batch
    if p.flash_attn is not None:
        cp.flash_attn_type = 1 if p.flash_attn else 0
    kv = {"f16": L.GGML_TYPE_F16, "q8_0": L.GGML_TYPE_Q8_0, "f32": L.GGML_TYPE_F32}[p.kv_type]
    cp.type_k = cp.type_v = kv
    return L.llama_init_from_model(model, cp)


def free_context(ctx) -> None:  # noqa: ANN001
    lib().llama_free(ctx)


def context_size(ctx) -> int:  # noqa: ANN001
    return int(lib().llama_n_ctx(ctx))


def seq_remove(ctx, seq: int, p0: int = 0, p1: int = -1) -> bool:  # noqa: ANN001
    L = lib()
    return bool(L.llama_memory_seq_rm(L.llama_get_memory(ctx), seq, p0, p1))


def seq_save(ctx, seq: int):  # noqa: ANN001, ANN201 - a ctypes byte buffer
    """Copy one sequence's KV state (only its used cells) into host memory."""
    L = lib()
    n = L.llama_state_seq_get_size(ctx, seq)
    buf = (ctypes.c_uint8 * n)()
    got = L.llama_state_seq_get_data(ctx, buf, n, seq)
    return buf if got == n else (ctypes.c_uint8 * got).from_buffer_copy(buf, 0)


def seq_restore(ctx, seq: int, buf) -> bool:  # noqa: ANN001
    """Load a state saved by :func:`seq_save` (or its bytes) into ``seq``; False when it did not
    fit or llama.cpp rejected it."""
    if isinstance(buf, bytes):
        buf = (ctypes.c_uint8 * len(buf)).from_buffer_copy(buf)
    return bool(lib().llama_state_seq_set_data(ctx, buf, len(buf), seq))


def memory_clear(ctx) -> None:  # noqa: ANN001
    L = lib()
    L.llama_memory_clear(L.llama_get_memory(ctx), True)


class Batch:
    """A reusable llama_batch for one sequence at a time."""

    def __init__(self, capacity: int) -> None:
        self._L = lib()
        self.capacity = capacity
        self.raw = self._L.llama_batch_init(capacity, 0, 1)

    def fill(self, tokens: Sequence[int], start_pos: int, seq: int, logits_last: bool) -> None:
        b = self.raw
        n = len(tokens)
        b.n_tokens = n
        for i, tok in enumerate(tokens):
            b.token[i] = tok
            b.pos[i] = start_pos + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = 0
        if logits_last and n:
            b.logits[n - 1] = 1

    def fill_all_logits(self, tokens: Sequence[int], start_pos: int, seq: int) -> None:
        self.fill(tokens, start_pos, seq, logits_last=False)
        for i in range(len(tokens)):
            self.raw.logits[i] = 1

    def free(self) -> None:
        if self.raw is not None:
            self._L.llama_batch_free(self.raw)
            self.raw = None


def decode(ctx, batch: Batch) -> int:  # noqa: ANN001
    """0 ok, 1 no KV slot (caller may evict and retry), other values are errors."""
    return int(lib().llama_decode(ctx, batch.raw))


def logits(ctx, index: int, n_vocab_: int) -> np.ndarray:  # noqa: ANN001
    ptr = lib().llama_get_logits_ith(ctx, index)
    return np.ctypeslib.as_array(ptr, shape=(n_vocab_,)).copy()


def forbid(ctx, index: int, n_vocab_: int, tokens) -> None:  # noqa: ANN001
    """Make ``tokens`` impossible at ``index`` (their logits -inf, in llama.cpp's own buffer)."""
    view = np.ctypeslib.as_array(lib().llama_get_logits_ith(ctx, index), shape=(n_vocab_,))
    view[list(tokens)] = -np.inf


# --- samplers ------------------------------------------------------------------------------


def grammar_sampler(voc, gbnf: str, root: str = "root"):  # noqa: ANN001, ANN201
    """A grammar sampler, or None when llama.cpp rejects the grammar (never segfaults)."""
    return lib().llama_sampler_init_grammar(voc, gbnf.encode("utf-8"), root.encode("utf-8"))


def sampler_chain(
    *,
    temperature: float,
    top_k: int,
    top_p: float,
    min_p: float,
    repeat_penalty: float,
    seed: int,
    n_vocab: int,
    grammar=None,  # noqa: ANN001 - a sampler from grammar_sampler(); the chain takes ownership
):  # noqa: ANN201
    L = lib()
    chain = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
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


def sample(chain, ctx, index: int = -1) -> int:  # noqa: ANN001
    """Sample from the logits at ``index``; llama_sampler_sample also accepts the token."""
    return int(lib().llama_sampler_sample(chain, ctx, index))


def free_sampler(s) -> None:  # noqa: ANN001
    lib().llama_sampler_free(s)
