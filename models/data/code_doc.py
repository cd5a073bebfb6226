"""Checks for the L2 coding answers of the data build.

Owns: finding fenced blocks in an answer, requiring a language tag on each, compiling every
Python block, and running a record's self-check (``!!`` lines) against the answer's code.
A failing check raises, so the build fails. It must not write files. Stdlib only.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types

from sources import Record

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\n(.*?)^```$", re.S | re.M)
LANGS = {
    "python",
    "bash",
    "sh",
    "sql",
    "regex",
    "javascript",
    "js",
    "typescript",
    "html",
    "css",
    "json",
    "toml",
    "yaml",
    "text",
    "go",
    "rust",
    "c",
    "dockerfile",
    "ini",
    "diff",
}


class CodeCheckError(ValueError):
    """A coding answer whose code does not compile or whose self-check fails."""


def blocks(answer: str) -> dict[str, list[str]]:
    """Fenced blocks of an answer grouped by language tag."""
    out: dict[str, list[str]] = {}
    for lang, body in FENCE.findall(answer):
        out.setdefault(lang, []).append(body.rstrip("\n"))
    return out


def check_record(rec: Record) -> bool:
    """Validate one coding record; returns True when it ran a self-check."""
    where, answer = rec.where(), rec.answer
    found = blocks(answer)
    if answer.count("```") != 2 * sum(len(v) for v in found.values()):
        raise CodeCheckError(f"{where}: unbalanced or untagged code fence")
    for lang in found:
        if lang not in LANGS:
            raise CodeCheckError(f"{where}: fence without a known language tag: {lang!r}")
    for i, src in enumerate(found.get("python", [])):
        try:
            compile(src, f"{where}#py{i}", "exec")
        except SyntaxError as exc:
            raise CodeCheckError(f"{where}: python block {i} does not compile: {exc}") from exc
    if not rec.checks:
        return False
    # A real module in sys.modules: dataclasses and pickling look their module up there.
    module = types.ModuleType("snippet")
    module.BLOCKS = found  # type: ignore[attr-defined]
    namespace = module.__dict__
    sys.modules["snippet"] = module
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            for src in found.get("python", []):
                exec(compile(src, where, "exec"), namespace)  # our own seeds
            exec(compile("\n".join(rec.checks), f"{where}!!", "exec"), namespace)
    except Exception as exc:  # any failure of our own snippet must stop the build
        raise CodeCheckError(f"{where}: self-check failed: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.modules.pop("snippet", None)
    return True
