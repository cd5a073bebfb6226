"""Check that every task in code_tasks.jsonl is solvable and that its tests are not vacuous.

Owns the reference check only: each reference function from code_solutions.py is wrapped in a
```python block the way a model answer would be, extracted, executed and tested in a fresh
subprocess with a timeout (the same path the evaluator takes); a stub that returns None must
fail the same tests. Stdlib only; never reads models/data/.
Run: python bench/eval/check_code_tasks.py
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_FILE = HERE / "code_tasks.jsonl"
TIMEOUT_S = 10.0
_FENCE = re.compile(r"```(?:python|py)[ \t]*\n(.*?)```", re.DOTALL)


def first_python_block(answer: str) -> str | None:
    """Return the body of the first ```python (or ```py) fenced block of an answer, if any."""
    match = _FENCE.search(answer)
    return match.group(1) if match else None


def run_tests(code: str, tests: str, timeout_s: float = TIMEOUT_S) -> tuple[bool, str]:
    """Exec `code` then `tests` in a fresh isolated interpreter; (passed, last error line)."""
    program = code + "\n\n" + tests
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "task_under_test.py"
        path.write_text(program, encoding="utf-8")
        try:
            proc = subprocess.run(
                [sys.executable, "-I", str(path)],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            return False, "timeout"
    tail = proc.stderr.strip().splitlines()
    return proc.returncode == 0, (tail[-1] if tail else "")


def load_tasks() -> list[dict[str, str]]:
    lines = TASKS_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load_solutions():  # -> ModuleType
    spec = importlib.util.spec_from_file_location("eval_code_solutions", HERE / "code_solutions.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(HERE / "code_solutions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_task(task: dict[str, str], solutions) -> tuple[bool, bool, str]:
    """(reference passes, stub fails, note) for one task."""
    entry = task["entry_point"]
    func = getattr(solutions, entry, None)
    if func is None:
        return False, False, f"no reference function {entry!r}"
    answer = f"Here you go:\n\n```python\n{inspect.getsource(func)}```\n\nThat's it."
    code = first_python_block(answer)
    if code is None:
        return False, False, "fence extraction failed"
    ref_ok, ref_err = run_tests(code, task["tests"])
    stub = f"def {entry}(*args, **kwargs):\n    return None\n"
    stub_ok, _ = run_tests(stub, task["tests"])
    return ref_ok, not stub_ok, ref_err


def main() -> int:
    tasks = load_tasks()
    solutions = load_solutions()
    failures = 0
    print(f"{'id':<6} {'entry_point':<24} {'reference':<10} {'stub fails':<10} note")
    for task in tasks:
        ref_ok, stub_fails, note = check_task(task, solutions)
        ok = ref_ok and stub_fails
        failures += not ok
        print(
            f"{task['id']:<6} {task['entry_point']:<24} {'pass' if ref_ok else 'FAIL':<10} "
            f"{'yes' if stub_fails else 'NO':<10} {'' if ok else note}"
        )
    print(f"\n{len(tasks) - failures}/{len(tasks)} tasks OK (reference passes, stub fails)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
