"""GBNF grammars: validated before llama.cpp ever samples with them.

An invalid grammar handed to a sampler segfaults llama.cpp, so every grammar passes
:func:`validate_gbnf` first (llama.cpp's own parser, through ``llama_sampler_init_grammar``, which
returns NULL instead of crashing).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from macaron_local.engine import _lcpp
from macaron_local.engine.tokenizer import Vocab, shared_tokenizer
from macaron_local.errors import GrammarError


def validate_gbnf(
    gbnf: str, *, vocab: Vocab | None = None, model_path: Path | str | None = None
) -> None:
    """Raise :class:`GrammarError` unless llama.cpp accepts ``gbnf`` (root rule ``root``)."""
    if not gbnf.strip():
        raise GrammarError("the grammar is empty")
    if "\x00" in gbnf:
        raise GrammarError("the grammar contains a NUL byte")
    voc = vocab or shared_tokenizer(model_path)
    with _captured_stderr() as captured:
        sampler = _lcpp.grammar_sampler(voc.raw, gbnf)
    if not sampler:  # a NULL pointer: llama.cpp's parser refused it
        detail = " ".join(captured.read().split())[:300]
        raise GrammarError(
            "llama.cpp rejected the grammar"
            + (f": {detail}" if detail else " (check rule names, quotes and the `root` rule)")
        )
    _lcpp.free_sampler(sampler)


@contextlib.contextmanager
def _captured_stderr() -> Iterator[io.StringIO]:
    """Capture what llama.cpp's grammar parser prints to fd 2 (it bypasses the log callback)."""
    out = io.StringIO()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.write(tmp.read().decode("utf-8", errors="replace"))
            out.seek(0)
