"""Tokens and chat prompts exactly as the serving side makes them.

Owns tokenization, incremental detokenization and rendering of chat messages with the model's
own chat template (the Jinja template in the GGUF, rendered the way llama-cpp-python's
``create_chat_completion`` does). The refine pipeline uses the same :class:`Tokenizer` so that
training sees exactly the tokens serving will produce. Loading a tokenizer reads only the
vocabulary (no weights).
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from macaron_local.engine import _lcpp
from macaron_local.errors import ModelLoadError, ModelNotFoundError

if TYPE_CHECKING:
    from jinja2 import Template

    from macaron_local.engine._lcpp import Model
    from macaron_local.engine._lcpp import Vocab as VocabPointer

Message = Mapping[str, str]


class Vocab:
    """Tokenize / detokenize / chat-render over a loaded llama.cpp model pointer."""

    def __init__(self, model: Model, template: str | None) -> None:
        voc = _lcpp.vocab(model)
        if voc is None:
            raise ModelLoadError("llama.cpp gave the model no vocabulary")
        self._voc: VocabPointer = voc
        self.n_vocab = _lcpp.n_vocab(self._voc)
        self._template = _compile(template) if template else None
        # a reasoning template (Qwen3) is told not to think: the specialists answer directly,
        # and serving and training render the same prompt (no empty think block on one side)
        self._kwargs = (
            {"enable_thinking": False} if template and "enable_thinking" in template else {}
        )
        self.bos_text = _lcpp.model_meta(model, "tokenizer.ggml.bos_token_id")
        self._piece_cache: dict[int, bytes] = {}

    @property
    def raw(self) -> VocabPointer:
        """The llama_vocab pointer, for grammar samplers."""
        return self._voc

    def tokenize(
        self, text: str, *, add_special: bool = False, parse_special: bool = True
    ) -> list[int]:
        return _lcpp.tokenize(self._voc, text, add_special=add_special, parse_special=parse_special)

    def piece(self, token: int) -> bytes:
        got = self._piece_cache.get(token)
        if got is None:
            got = self._piece_cache[token] = _lcpp.token_bytes(self._voc, token)
        return got

    def detokenize(self, tokens: Iterable[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")

    def decoder(self) -> codecs.IncrementalDecoder:
        """A UTF-8 decoder for streaming: feed :meth:`piece` bytes, get whole characters."""
        return codecs.getincrementaldecoder("utf-8")(errors="replace")

    def is_eog(self, token: int) -> bool:
        return _lcpp.is_eog(self._voc, token)

    def render_chat(
        self, messages: Sequence[Message], *, add_generation_prompt: bool = True
    ) -> str:
        """Render ``messages`` with the model's chat template (ChatML fallback if it has none)."""
        msgs = [dict(m) for m in messages]
        if self._template is None:
            body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in msgs)
            return body + ("<|im_start|>assistant\n" if add_generation_prompt else "")
        return self._template.render(
            messages=msgs,
            add_generation_prompt=add_generation_prompt,
            bos_token="",
            eos_token="",
            **self._kwargs,
        )

    def count(self, text: str) -> int:
        return len(self.tokenize(text))


@lru_cache(maxsize=4)
def _compile(template: str) -> Template:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template)


class Tokenizer(Vocab):
    """A vocabulary-only load of a GGUF model: tokenizing without weights (fast, small)."""

    def __init__(self, model_path: Path | str) -> None:
        # llama.cpp reads the vocabulary and chat template in ~0.1 s; a Python parse of the
        # GGUF header (inspect_model) takes seconds, and every profile load validates a grammar.
        path = Path(model_path)
        if not path.is_file():
            raise ModelNotFoundError(f"model file not found: {path}", path=path)
        model = _lcpp.load_model(str(path), vocab_only=True)
        if not model:
            raise ModelLoadError(
                f"llama.cpp could not read the vocabulary of {path.name}", path=path
            )
        self._model = model
        super().__init__(model, _lcpp.chat_template(model))


_shared_lock = threading.Lock()


@lru_cache(maxsize=4)
def _shared(path: str) -> Tokenizer:
    return Tokenizer(path)


def shared_tokenizer(model_path: Path | str | None = None) -> Tokenizer:
    """One cached vocabulary-only tokenizer per model file (default: the embedded base)."""
    if model_path is None:
        from macaron_local.manifests import embedded_model_file

        model_path = embedded_model_file()
    with _shared_lock:
        return _shared(str(Path(model_path).resolve()))
