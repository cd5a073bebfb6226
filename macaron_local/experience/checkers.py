"""Automatic checkers: does an answer do what a task asked? Used for rewards and coverage.

Owns the checker spec (a JSON object with a ``kind``) and :func:`check`:

- ``{"kind": "contains", "expect": ["Biscuit"]}``: every string appears (case-insensitive);
- ``{"kind": "any", "expect": ["yes", "sure"]}``: at least one appears;
- ``{"kind": "absent", "expect": ["as an AI"]}``: none appears;
- ``{"kind": "regex", "pattern": "..."}``: the pattern matches somewhere;
- ``{"kind": "python_tests", "tests": "assert f(1) == 2"}``: the answer's first ```python
  block, then the tests, run in a fresh isolated interpreter with a timeout;
- ``{"kind": "all", "checks": [...]}``: every sub-check passes.

Must not: run answer code in this process, or reach the network.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from macaron_local.errors import RefineError

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S)
TIMEOUT_S = 10.0


def first_code_block(answer: str) -> str | None:
    """The body of the first fenced code block (```python, ```py or bare)."""
    m = _FENCE.search(answer)
    return m.group(1) if m else None


def run_python_tests(code: str, tests: str, timeout_s: float = TIMEOUT_S) -> bool:
    """Exec ``code`` then ``tests`` in ``python -I`` in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "task.py"
        path.write_text(code + "\n\n" + tests, encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, "-I", str(path)],
                cwd=tmp,
                capture_output=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False
    return proc.returncode == 0


def check(spec: Mapping[str, Any], answer: str) -> bool:
    """Does ``answer`` pass ``spec``?"""
    kind = spec.get("kind")
    low = answer.lower()
    if kind == "contains":
        return all(str(s).lower() in low for s in spec["expect"])
    if kind == "any":
        return any(str(s).lower() in low for s in spec["expect"])
    if kind == "absent":
        return not any(str(s).lower() in low for s in spec["expect"])
    if kind == "regex":
        return re.search(spec["pattern"], answer, re.I | re.S) is not None
    if kind == "python_tests":
        code = first_code_block(answer)
        return code is not None and run_python_tests(code, spec["tests"])
    if kind == "all":
        return all(check(s, answer) for s in spec["checks"])
    raise RefineError(f"unknown checker kind {kind!r}")
