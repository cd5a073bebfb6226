"""The Mixture-of-LoRA engine: one base model, many LoRA adapters, one active per request.

Owns the llama.cpp model, the adapters, the single context and its KV slots, and the worker
thread that runs every llama.cpp call. The base is loaded once (mmap); adapters are attached
without reloading anything; each request names one adapter (or none) and a KV slot, and reuses
that slot's longest matching prefix. Streams tokens, honours stop strings, sampling settings and
validated GBNF grammars, cancels between tokens, and raises instead of truncating.

Must not: know about turns, profiles or the store (hops call it with prompts).
"""

from __future__ import annotations

import codecs
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from macaron_local.engine import _lcpp, prefix_cache
from macaron_local.engine.gguf_model import ModelInfo, inspect_model
from macaron_local.engine.grammar import validate_gbnf
from macaron_local.engine.lora_io import check_lora, read_lora
from macaron_local.engine.slots import Slot, SlotTable
from macaron_local.engine.tokenizer import Vocab
from macaron_local.engine.types import GREEDY, AdapterInfo, Completion, Sampling
from macaron_local.engine.worker import (
    BACKGROUND,
    INTERACTIVE,
    ROUTE,
    SUMMARY,
    Job,
    Stream,
    Worker,
)
from macaron_local.errors import (
    AdapterFormatError,
    AdapterMismatchError,
    CancelledError,
    ContextOverflowError,
    DecodeError,
    EngineError,
    ModelLoadError,
    UnknownAdapterError,
)

if TYPE_CHECKING:
    from macaron_local.engine._lcpp import Adapter, Context, Model, Sampler

__all__ = [
    "BACKGROUND",
    "INTERACTIVE",
    "ROUTE",
    "SUMMARY",
    "AdapterOptions",
    "Engine",
    "EngineConfig",
    "RequestOptions",
]

log = logging.getLogger(__name__)

# Prompt tokens a background job (a summary) evaluates between yields: an interactive request
# waits for at most one chunk. 64 cost turns ~0.3 s each on one core (4.3 s over bench/turns.py).
BACKGROUND_CHUNK = 16
# How far before a prompt's end a recurrent state is checkpointed (see _feed_in_steps)
CHECKPOINT_BACKOFF = 4


@dataclass(frozen=True)
class EngineConfig:
    """Resources for one engine.

    ``n_ctx`` is the longest prompt + answer one request may use (the resident KV sequence).
    ``n_threads`` 0 means half the cores for generation (memory-bound: more threads only
    contend) and all cores but one for prompt processing: llama.cpp's threads spin on barriers,
    so when the UI or any other process holds a core, using every core made a 14-token prompt
    take seconds instead of a fraction of one on 2 cores. ``snapshot_mb`` caps the host memory that
    parked slots' KV snapshots may hold. ``resident_slots`` is how many slots keep their own KV
    sequence of ``n_ctx`` cells (``resident_slots`` x ``n_ctx`` of KV, allocated at start): a
    switch between them copies nothing, where a switch to a parked slot copies its KV back
    from the host (see :func:`resident_slots` for the rule). On a recurrent or hybrid base,
    whose state cannot lose a sequence's tail, each slot keeps up to ``state_checkpoints`` host
    copies of its state at the end of its recent prompts, so a prompt that extends one of them
    is read from there instead of from the start (``slots.py``).
    """

    n_ctx: int = 4096
    n_batch: int = 512
    n_threads: int = 0
    n_gpu_layers: int = 0
    flash_attn: bool | None = None  # None = llama.cpp's AUTO
    kv_type: str = "f16"  # "f16" | "q8_0" | "f32" (exact parity tests)
    snapshot_mb: int = 256
    n_ubatch: int | None = None  # None: n_batch
    offload_kqv: bool = True  # the KV cache and attention on the GPU (with n_gpu_layers > 0)
    resident_slots: int = 1  # KV sequences of n_ctx each; other slots are parked on the host
    state_checkpoints: int = 3  # recurrent/hybrid bases: host checkpoints kept per slot (0: off)

    def context_params(self) -> _lcpp.ContextParams:
        cores = max(1, os.cpu_count() or 1)
        gen = self.n_threads or max(1, cores // 2)
        return _lcpp.ContextParams(
            n_ctx=self.n_ctx * max(1, self.resident_slots),
            n_seq=max(1, self.resident_slots),
            n_batch=self.n_batch,
            n_threads=gen,
            n_threads_batch=self.n_threads or max(1, cores - 1),
            flash_attn=self.flash_attn,
            kv_type=self.kv_type,
            n_ubatch=self.n_ubatch,
            offload_kqv=self.offload_kqv,
        )


class AdapterOptions(TypedDict, total=False):
    """The keyword options of :meth:`Engine.load_adapter` that :meth:`Engine.load_adapters`
    passes on to each adapter."""

    scale: float
    base_sha256: str | None


class RequestOptions(TypedDict, total=False):
    """The keyword options of :meth:`Engine.generate`, as :meth:`Engine.complete` takes them."""

    adapter: str | None
    slot: str | None
    max_tokens: int
    sampling: Sampling
    stop: Sequence[str]
    grammar: str | None
    priority: int
    capture_logits: bool
    on_token: Callable[[int], None] | None
    ban_first: Sequence[int]
    cancel: threading.Event | None
    prefix: bool


class Engine:
    """Owner of llama.cpp. Thread-safe: every call is executed on the engine's worker thread."""

    def __init__(
        self,
        model_path: Path | str,
        config: EngineConfig | None = None,
        *,
        base_sha256: str | None = None,
    ) -> None:
        self.config = config or EngineConfig()
        self._text_lock = threading.Lock()
        self._grammars_ok: set[str] = set()  # grammars llama.cpp accepted (under _text_lock)
        self.info: ModelInfo = inspect_model(model_path)
        self.base_sha256 = base_sha256
        self._adapters: dict[str, tuple[AdapterInfo, Adapter]] = {}
        self.adapter_errors: dict[str, Exception] = {}
        self._active: Adapter | None = None
        self._open = False  # True from a successful load until close()
        self._worker = Worker()
        try:
            self._worker.call(self._load)
        except BaseException:
            self._worker.close()
            raise

    # --- lifetime ------------------------------------------------------------------------

    def _load(self) -> None:
        path = str(self.info.path)
        model = _lcpp.load_model(path, n_gpu_layers=self.config.n_gpu_layers)
        if not model:
            raise ModelLoadError(f"llama.cpp could not load {self.info.path.name}", path=path)
        seats = self._seats_that_fit()
        if seats != self.config.resident_slots:
            self.config = replace(self.config, resident_slots=seats)
        ctx = _lcpp.new_context(model, self.config.context_params())
        if not ctx:
            _lcpp.free_model(model)
            raise ModelLoadError(
                f"llama.cpp could not create a context of {self.config.n_ctx} tokens", path=path
            )
        self._model: Model = model
        self._ctx: Context = ctx
        self.vocab = Vocab(self._model, self.info.chat_template)
        self.memory = _lcpp.memory_kind(self._model)  # "attention" | "recurrent" | "hybrid"
        self._checkpoints = self.config.state_checkpoints if self.memory != "attention" else 0
        self.n_ctx = _lcpp.context_size(self._ctx)
        self._batch = _lcpp.Batch(self.config.n_batch)
        self._slots = SlotTable(
            save=lambda seq: _lcpp.seq_save(self._ctx, seq),
            restore=lambda seq, buf: _lcpp.seq_restore(self._ctx, seq, buf),
            clear=lambda seq: _lcpp.seq_remove(self._ctx, seq, 0, -1),
            budget_bytes=self.config.snapshot_mb << 20,
            seats=self.config.resident_slots,
        )
        self._open = True

    def _seats_that_fit(self) -> int:
        """``resident_slots``, lowered to what half the free memory where the KV lives (the
        GPUs' with the KV offloaded, else the host's) holds: nine 32k seats of a large base are
        tens of GiB, and a context that does not fit fails to start. Measured after the weights
        are loaded; the other half is left for compute buffers, snapshots and the app."""
        asked = max(1, self.config.resident_slots)
        per_token = kv_bytes_per_token(self.info, self.config.kv_type)
        if asked == 1 or per_token is None:
            return asked
        on_gpu = self.config.offload_kqv and self.config.n_gpu_layers != 0
        try:
            gpus = [d for d in _lcpp.devices() if d.gpu] if on_gpu else []
        except (ImportError, OSError, AttributeError) as exc:  # a build without the device API
            log.warning("resident_slots %d kept: the GPU's free memory is unknown (%s)", asked, exc)
            return asked
        from macaron_local.hostinfo import host_memory_available

        free = sum(d.free for d in gpus) if gpus else host_memory_available()
        where = "the GPU" if gpus else "host memory"
        if free is None:
            return asked
        seats = fit_seats(asked, per_token * self.config.n_ctx, free)
        if seats < asked:
            log.warning(
                "resident_slots %d lowered to %d: a seat of %d tokens is %.0f MiB of KV and %s "
                "has %.0f MiB free",
                asked, seats, self.config.n_ctx, per_token * self.config.n_ctx / 2**20, where,
                free / 2**20,
            )  # fmt: skip
        return seats

    def settings(self) -> dict[str, object]:
        """What the engine runs with, as a turn records it: the resources in force (seats
        after sizing), and the kind of memory the base has."""
        c = self.config
        return {
            "n_ctx": c.n_ctx,
            "kv_type": c.kv_type,
            "flash_attn": c.flash_attn,
            "n_gpu_layers": c.n_gpu_layers,
            "offload_kqv": c.offload_kqv,
            "resident_slots": c.resident_slots,
            "memory": self.memory,
        }

    def close(self) -> None:
        """Free everything (idempotent)."""
        if not self._open:
            self._worker.close()
            return

        def free() -> None:
            with self._text_lock:  # no caller thread is inside the vocabulary while it goes
                self._batch.free()
                _lcpp.free_context(self._ctx)
                _lcpp.free_model(self._model)  # also frees the adapters (and the vocabulary)
                self._open = False

        self._worker.close(final=free)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- adapters ------------------------------------------------------------------------

    @property
    def adapters(self) -> dict[str, AdapterInfo]:
        return {name: info for name, (info, _) in self._adapters.items()}

    def load_adapter(
        self, name: str, path: Path | str, *, scale: float = 1.0, base_sha256: str | None = None
    ) -> AdapterInfo:
        """Check and attach a GGUF LoRA under ``name``; a bad file raises and changes nothing."""
        lora = read_lora(path)
        check_lora(lora, self.info.linear_shapes(), self.info.arch, base_sha256 or self.base_sha256)
        info = AdapterInfo(
            name=name,
            path=Path(path),
            rank=lora.rank,
            alpha=lora.alpha,
            targets=tuple(lora.targets),
            scale=scale,
            base_sha256=lora.base_sha256,
        )

        def attach() -> AdapterInfo:
            handle = _lcpp.load_adapter(self._model, str(path))
            if not handle:
                raise AdapterFormatError(
                    f"llama.cpp refused the adapter {Path(path).name}", name=name, path=path
                )
            if name in self._adapters:
                self._drop_adapter(name)
            self._adapters[name] = (info, handle)
            self.adapter_errors.pop(name, None)
            return info

        return self._worker.call(attach)

    def load_adapters(
        self, paths: dict[str, Path], **kw: Unpack[AdapterOptions]
    ) -> dict[str, Exception]:
        """Load several adapters; a bad one is reported in the result and the rest still load."""
        for name, p in paths.items():
            try:
                self.load_adapter(name, p, **kw)
            except (AdapterFormatError, AdapterMismatchError) as exc:
                exc.name = name
                self.adapter_errors[name] = exc
        return dict(self.adapter_errors)

    def unload_adapter(self, name: str) -> None:
        """Detach and free the adapter ``name`` (its slots are wiped); unknown names are a
        no-op. Used for adapters loaded for a while only (the refine gate's candidate)."""

        def drop() -> None:
            if name in self._adapters:
                self._drop_adapter(name)

        self._worker.call(drop)

    def _drop_adapter(self, name: str) -> None:
        _, handle = self._adapters.pop(name)
        self._slots.forget_adapter(name)
        if self._active is handle:
            _lcpp.set_adapter(self._ctx, None)
            self._active = None
        _lcpp.free_adapter(handle)

    def _require(self, name: str | None) -> Adapter | None:
        if name is None:
            return None
        if name not in self._adapters:
            err = self.adapter_errors.get(name)
            detail = f" (it failed to load: {err})" if err else ""
            raise UnknownAdapterError(
                f"no adapter named {name!r} is loaded{detail}; loaded: "
                f"{', '.join(sorted(self._adapters)) or 'none'}",
                name=name,
            )
        return self._adapters[name][1]

    def _activate(self, name: str | None) -> None:
        handle = self._require(name)
        if handle is not self._active:
            scale = self._adapters[name][0].scale if name else 1.0
            _lcpp.set_adapter(self._ctx, handle, scale)
            self._active = handle

    # --- text ----------------------------------------------------------------------------

    # Callers tokenize on their own threads (no queueing behind a generation); the lock keeps
    # that from racing close(), which frees the model and its vocabulary on the worker thread:
    # a turn still counting tokens while the app quits got a segfault, now an EngineError.

    @contextmanager
    def _text(self) -> Iterator[Vocab]:
        with self._text_lock:
            if not self._open:
                raise EngineError("the engine is closed")
            yield self.vocab

    def check_grammar(self, gbnf: str) -> None:
        """Raise :class:`GrammarError` unless llama.cpp accepts ``gbnf`` (an invalid grammar
        segfaults it at sampling time). Each accepted grammar is checked once per engine."""
        with self._text() as vocab:
            if gbnf not in self._grammars_ok:
                validate_gbnf(gbnf, vocab=vocab)
                self._grammars_ok.add(gbnf)

    def tokenize(self, text: str) -> list[int]:
        with self._text() as vocab:
            return vocab.tokenize(text)

    def detokenize(self, tokens: Sequence[int]) -> str:
        with self._text() as vocab:
            return vocab.detokenize(tokens)

    def render_chat(
        self, messages: Sequence[dict[str, str]], *, add_generation_prompt: bool = True
    ) -> str:
        with self._text() as vocab:
            return vocab.render_chat(messages, add_generation_prompt=add_generation_prompt)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    # --- requests ------------------------------------------------------------------------

    def generate(
        self,
        prompt: str | Sequence[int],
        *,
        adapter: str | None = None,
        slot: str | None = None,
        max_tokens: int = 256,
        sampling: Sampling = GREEDY,
        stop: Sequence[str] = (),
        grammar: str | None = None,
        priority: int = INTERACTIVE,
        capture_logits: bool = False,
        on_token: Callable[[int], None] | None = None,
        ban_first: Sequence[int] = (),
        cancel: threading.Event | None = None,
        prefix: bool = False,
    ) -> Stream[Completion]:
        """Start a request; the returned :class:`Stream` yields text and ends with a Completion.

        ``slot`` names the KV slot (default: the adapter's own) whose prefix is reused;
        ``ban_first`` lists tokens the answer may not start with; ``cancel`` set ends the
        request at its next step, as ``Stream.cancel()`` does; ``prefix`` says the prompt is a
        fixed prefix that later prompts on the slot extend (on a recurrent base its whole
        state is checkpointed, see ``slots.py``). Raises
        before anything runs if the adapter is unknown, the grammar invalid, or the prompt plus
        ``max_tokens`` does not fit the context.
        """
        tokens = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
        self._require(adapter)
        need = len(tokens) + max_tokens
        if not tokens or need > self.n_ctx:
            raise ContextOverflowError(
                f"the prompt ({len(tokens)} tokens) plus the answer budget ({max_tokens}) needs "
                f"{need} tokens; the context holds {self.n_ctx}",
                n_tokens=need,
                limit=self.n_ctx,
                hint="shorten the input or raise resources.n_ctx in the profile",
            )
        if grammar is not None:
            self.check_grammar(grammar)
        key = slot or f"adapter:{adapter}"
        req = _Request(
            tokens,
            adapter,
            key,
            max_tokens,
            sampling,
            tuple(stop),
            grammar,
            capture_logits,
            on_token,
            priority,
            tuple(ban_first),
            prefix,
        )

        def job(stream: Stream[Completion]) -> Job[Completion]:
            stream.cancel_on(cancel)
            return self._run(req, stream)

        return self._worker.submit(job, priority)

    def chat_tokens(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The prompt tokens of a chat: rendered with the model's template, tokenized once."""
        with self._text() as vocab:
            return vocab.tokenize(vocab.render_chat(messages, add_generation_prompt=True))

    def complete(self, prompt: str | Sequence[int], **kw: Unpack[RequestOptions]) -> Completion:
        """Run a request to the end and return its :class:`Completion`."""
        return self.generate(prompt, **kw).result()

    def prefill(
        self,
        prompt: str | Sequence[int],
        *,
        adapter: str | None = None,
        slot: str,
        cache_dir: Path | None = None,
    ) -> Stream[Completion] | None:
        """Get ``slot`` holding ``prompt`` under ``adapter`` before anyone asks for it.

        With ``cache_dir``, a prefix saved there by an earlier start is restored (a few ms) and
        None is returned. Otherwise the prompt is read in the background (the returned
        :class:`Stream`) and, with ``cache_dir``, saved there once read.
        """
        tokens = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
        self._require(adapter)
        path = None
        if cache_dir is not None:
            try:
                path = cache_dir / f"{prefix_cache.key(self._kv_identity(adapter), tokens)}.kv"
            except OSError as exc:  # a weights file gone since it was loaded: no caching
                log.warning("not saving the prefix of slot %s: %s", slot, exc)
            if path is not None and self._worker.call(
                lambda: self._restore_prefix(path, slot, adapter, tokens)
            ):
                return None
        stream = self.generate(
            tokens, adapter=adapter, slot=slot, max_tokens=1, priority=BACKGROUND, prefix=True
        )
        if path is not None:  # queued behind the read (same priority, later): runs once it is done
            self._worker.submit(
                lambda _: self._save_prefix(path, slot, adapter, tokens), BACKGROUND
            )
        return stream

    def _kv_identity(self, adapter: str | None) -> tuple[object, ...]:
        """Everything a slot's KV values depend on besides its tokens."""
        from importlib.metadata import version

        info = self._adapters[adapter][0] if adapter else None
        return (
            version("llama-cpp-python"),
            self.base_sha256 or prefix_cache.file_id(self.info.path),
            prefix_cache.file_id(info.path) if info else None,
            info.scale if info else None,
            self.config.kv_type,
            self.config.flash_attn,
            self.config.n_gpu_layers,
        )

    def _restore_prefix(self, path: Path, key: str, adapter: str | None, tokens: list[int]) -> bool:
        saved = prefix_cache.read(path)
        if saved is None or saved[0][: len(tokens)] != tokens:
            return False
        slot = self._slots.get(key, adapter)
        self._slots.enter(slot)
        self._slots.wipe(slot)
        if not _lcpp.seq_restore(self._ctx, _seq(slot), saved[1]):
            self._slots.wipe(slot)
            return False
        slot.tokens[:] = saved[0]
        if self._checkpoints:
            self._checkpoint(slot)
        return True

    def _save_prefix(
        self, path: Path, key: str, adapter: str | None, tokens: list[int]
    ) -> Job[None]:
        slot = self._slots.get(key, adapter)
        if slot.tokens[: len(tokens)] == tokens:  # not when the read was cancelled
            self._slots.enter(slot)
            try:
                state = bytes(_lcpp.seq_save(self._ctx, _seq(slot)))
                prefix_cache.write(path, slot.tokens, state)
            except OSError as exc:
                log.warning("could not save the prefix of slot %s to %s: %s", key, path, exc)
        return
        yield  # pragma: no cover - makes this a generator

    def eval_logits(
        self,
        tokens: Sequence[int],
        *,
        adapter: str | None = None,
        all_positions: bool = False,
        first: int = 0,
        slot: str | None = None,
    ) -> npt.NDArray[np.float32]:
        """Logits for ``tokens``: the last row, or (``all_positions``) every row from position
        ``first`` on. From scratch (no cache), or with ``slot`` on top of the prefix that slot
        holds, up to ``first`` (the rows asked for are always computed); the slot then holds
        ``tokens``."""

        def run() -> npt.NDArray[np.float32]:
            self._activate(adapter)
            held = self._slots.get(slot or "__scratch__", adapter)
            self._slots.enter(held)
            seq = _seq(held)
            upto = first if all_positions else len(tokens) - 1
            keep = self._rewind(
                held, tokens, min(_common_prefix(held.tokens, tokens), upto) if slot else 0, upto
            )
            rows = []
            for start in range(keep, len(tokens), self.config.n_batch):
                chunk = list(tokens[start : start + self.config.n_batch])
                skip = max(0, first - start)
                last = start + len(chunk) >= len(tokens)
                if all_positions:
                    self._batch.fill_all_logits(chunk, start, seq, skip=skip)
                else:
                    self._batch.fill(chunk, start, seq, logits_last=last)
                self._decode()
                held.tokens.extend(chunk)
                wanted = range(skip, len(chunk)) if all_positions else [-1] if last else []
                rows += [_lcpp.logits(self._ctx, i, self.vocab.n_vocab) for i in wanted]
            if slot is None:
                self._slots.wipe(held)
            return np.stack(rows) if all_positions else rows[-1]

        return self._worker.call(run)

    def slots(self) -> dict[str, tuple[str | None, int]]:
        """Slot key -> (adapter, tokens held), resident or parked."""
        return self._worker.call(self._slots.snapshot)

    def parked_bytes(self) -> int:
        """Host memory held by parked slots' KV snapshots."""
        return self._worker.call(self._slots.parked_bytes)

    def reset(self) -> None:
        """Drop every slot's KV (the next request of each slot evaluates its whole prompt)."""
        self._worker.call(self._slots.clear)

    # --- the token loop (worker thread) -----------------------------------------------------

    def _run(self, req: _Request, stream: Stream[Completion]) -> Job[Completion]:
        started = time.perf_counter()
        out = Completion(n_prompt=len(req.tokens), queue_s=started - stream.submitted)
        self._activate(req.adapter)
        slot = self._slots.get(req.key, req.adapter)
        self._slots.enter(slot)
        # yield between prompt chunks, so a route, a close or a cancel waits for one chunk, not
        # the whole prompt; summaries and background work in small chunks (a route or an answer
        # may be waiting, or the app quitting: a 335-token summary was one 4 s step under load)
        small = req.priority == SUMMARY or req.priority > INTERACTIVE
        chunk = BACKGROUND_CHUNK if small else self.config.n_batch
        out.n_reused, out.n_evaluated = yield from self._feed_in_steps(req, slot, chunk, stream)
        out.prompt_s = time.perf_counter() - started
        chain = self._sampler(req)
        try:
            yield from self._loop(req, stream, slot, chain, out)
        finally:
            _lcpp.free_sampler(chain)
        out.total_s = time.perf_counter() - stream.submitted
        return out

    def _loop(
        self, req: _Request, stream: Stream[Completion], slot: Slot, chain: Sampler, out: Completion
    ) -> Job[None]:
        text = _StopText(req.stop, self.vocab.decoder())
        context = list(req.tokens)
        while True:
            if stream.cancelled:
                out.finish_reason = "cancelled"
                break
            if req.capture_logits:
                out.step_logits.append(_lcpp.logits(self._ctx, -1, self.vocab.n_vocab))
            if req.ban_first and not out.tokens:
                _lcpp.forbid(self._ctx, -1, self.vocab.n_vocab, req.ban_first)
            token = _lcpp.sample(chain, self._ctx, -1)
            if not out.tokens:
                out.ttft_s = time.perf_counter() - stream.submitted
            if self.vocab.is_eog(token):
                out.finish_reason = "eog"
                break
            out.tokens.append(token)
            if req.on_token:
                req.on_token(token)
            piece, stopped = text.push(self.vocab.piece(token))
            if piece:
                stream._put_text(piece)
            if stopped:
                out.finish_reason = "stop"
                break
            if len(out.tokens) >= req.max_tokens:
                out.finish_reason = "length"
                break
            context.append(token)
            yield
            self._activate(req.adapter)  # a parked job may resume after another one ran
            self._slots.enter(slot)
            self._feed(slot, context)
        tail = text.flush(out.finish_reason == "stop")
        if tail:
            stream._put_text(tail)
        out.text = text.text
        if out.finish_reason == "cancelled":
            raise CancelledError("the request was cancelled")
        return None

    def _sampler(self, req: _Request) -> Sampler:
        grammar = None
        if req.grammar is not None:
            grammar = _lcpp.grammar_sampler(self.vocab.raw, req.grammar)
        s = req.sampling
        return _lcpp.sampler_chain(
            temperature=s.temperature,
            top_k=s.top_k,
            top_p=s.top_p,
            min_p=s.min_p,
            repeat_penalty=s.repeat_penalty,
            seed=s.seed,
            n_vocab=self.vocab.n_vocab,
            grammar=grammar,
        )

    def _feed_in_steps(
        self, req: _Request, slot: Slot, chunk: int, stream: Stream[Completion]
    ) -> Generator[None, None, tuple[int, int]]:
        """:meth:`_feed` in chunks of ``chunk`` new tokens with a yield after each, so a prompt
        holds the engine for one chunk at most, not its whole length; a cancelled request stops
        feeding (the slot keeps the valid prefix it has)."""
        tokens = req.tokens
        cap = len(tokens) - 1  # the last token is always evaluated for its logits
        keep = self._rewind(slot, tokens, min(_common_prefix(slot.tokens, tokens), cap), cap)
        # a recurrent state is checkpointed a few tokens before the prompt's end: the next
        # prompt may tokenize the boundary with the answer differently (chat templates end in
        # a newline that can merge with the answer's first characters)
        mark = len(tokens) - (0 if req.prefix else CHECKPOINT_BACKOFF) if self._checkpoints else -1
        evaluated, end = 0, keep
        while end < len(tokens):
            if end > keep:
                yield
                if stream.cancelled:
                    break
                self._activate(req.adapter)  # another job may have run meanwhile
                self._slots.enter(slot)
                # and may have read this slot further along the same tokens (a route request
                # over the router's warm-up): go on from there instead of cutting its work off
                end = max(end, min(_common_prefix(slot.tokens, tokens), len(tokens) - 1))
            start, end = end, min(end + chunk, len(tokens))
            if start < mark < end:
                end = mark
            evaluated += self._feed(slot, tokens[:end])[1]
            if end == mark:
                self._checkpoint(slot)
        return keep, evaluated

    def _checkpoint(self, slot: Slot) -> None:
        """Keep the state of the seated ``slot`` as a checkpoint at the tokens it holds."""
        self._slots.checkpoint(slot, _lcpp.seq_save(self._ctx, _seq(slot)), self._checkpoints)

    def _feed(self, slot: Slot, tokens: list[int]) -> tuple[int, int]:
        """Make ``slot`` hold ``tokens``, logits for the last one; returns (reused, evaluated)."""
        cap = len(tokens) - 1  # the last token is always evaluated for its logits
        keep = self._rewind(slot, tokens, min(_common_prefix(slot.tokens, tokens), cap), cap)
        seq = _seq(slot)
        todo = tokens[keep:]
        for start in range(0, len(todo), self.config.n_batch):
            chunk = todo[start : start + self.config.n_batch]
            last = start + len(chunk) >= len(todo)
            self._batch.fill(chunk, len(slot.tokens), seq, logits_last=last)
            self._decode()
            slot.tokens.extend(chunk)
        return keep, len(todo)

    def _rewind(self, slot: Slot, tokens: Sequence[int], keep: int, cap: int) -> int:
        """Make the seated ``slot`` hold a prefix of ``tokens``: its first ``keep`` tokens (a
        common prefix), or further along from a checkpoint of at most ``cap`` tokens; returns
        how many it holds. A state that cannot lose its tail (recurrent) is cleared first."""
        if keep < len(slot.tokens):
            seq = _seq(slot)
            if not _lcpp.seq_remove(self._ctx, seq, keep, -1):
                _lcpp.seq_remove(self._ctx, seq, 0, -1)
                keep = 0
            del slot.tokens[keep:]
        cp = self._slots.best_checkpoint(slot, tokens, cap, above=keep)
        if cp is not None:
            self._slots.rewind(slot, cp)
            return len(slot.tokens)
        return keep

    def _decode(self) -> None:
        rc = _lcpp.decode(self._ctx, self._batch)
        if rc != 0:
            raise DecodeError(
                f"llama_decode failed with code {rc}"
                + (" (no room left in the KV cache)" if rc == 1 else "")
            )


@dataclass(frozen=True)
class _Request:
    tokens: list[int]
    adapter: str | None
    key: str
    max_tokens: int
    sampling: Sampling
    stop: tuple[str, ...]
    grammar: str | None
    capture_logits: bool
    on_token: Callable[[int], None] | None
    priority: int = INTERACTIVE
    ban_first: tuple[int, ...] = ()
    prefix: bool = False  # checkpoint the whole prompt (recurrent bases), not short of its end


KV_BYTES = {"f16": 2.0, "f32": 4.0, "q8_0": 34 / 32}  # bytes per element (q8_0: 32 in 34 bytes)


def kv_bytes_per_token(info: ModelInfo, kv_type: str) -> int | None:
    """Bytes of K and V one token takes in the cache, from the attention layers' K and V
    projections (hybrid bases: only those layers have a KV cache); None when the model's
    tensors do not say (fused QKV, latent attention)."""
    shapes = info.tensor_shapes
    k = [s[0] for n, s in shapes.items() if n.startswith("blk.") and n.endswith(".attn_k.weight")]
    v = [s[0] for n, s in shapes.items() if n.startswith("blk.") and n.endswith(".attn_v.weight")]
    if not k or len(k) != len(v):
        return None
    return int((sum(k) + sum(v)) * KV_BYTES[kv_type])


def fit_seats(asked: int, seat_bytes: int, free: int) -> int:
    """How many of ``asked`` seats of ``seat_bytes`` fit in half of ``free`` (at least one)."""
    return max(1, min(asked, (free // 2) // max(1, seat_bytes)))


def _seq(slot: Slot) -> int:
    """The KV sequence of a slot just entered (:meth:`SlotTable.enter` seats it)."""
    if slot.seq is None:
        raise RuntimeError(f"slot {slot.key} holds no KV sequence")
    return slot.seq


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _StopText:
    """Accumulates decoded text, holding back what could still become a stop string."""

    def __init__(self, stops: Sequence[str], decoder: codecs.IncrementalDecoder) -> None:
        self.stops = [s for s in stops if s]
        self.decoder = decoder
        self.text = ""
        self.sent = 0

    def push(self, piece: bytes) -> tuple[str, bool]:
        self.text += self.decoder.decode(piece)
        for s in self.stops:
            at = self.text.find(s, max(0, self.sent - len(s)))
            if at >= 0:
                self.text = self.text[:at]
                return self._emit(len(self.text)), True
        hold = max((_overlap(self.text, s) for s in self.stops), default=0)
        return self._emit(len(self.text) - hold), False

    def _emit(self, upto: int) -> str:
        upto = max(upto, self.sent)
        piece, self.sent = self.text[self.sent : upto], upto
        return piece

    def flush(self, stopped: bool) -> str:
        if not stopped:
            self.text += self.decoder.decode(b"", final=True)
        return self._emit(len(self.text))


def _overlap(text: str, stop: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``stop``."""
    for n in range(min(len(text), len(stop) - 1), 0, -1):
        if text.endswith(stop[:n]):
            return n
    return 0
