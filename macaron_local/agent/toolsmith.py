"""``save_tool`` / ``promote_tool``: helpers L1 writes, validated before they become tools.

Owns the life of a model-written helper: *candidate* (saved with the model's own cases, which
must pass), *promoted* (passed every held-out reference case the host keeps and the model never
sees; defined in every later REPL, in any session), *demoted* (a promoted tool that later failed:
at run time, or against updated references). Every change is appended to ``events.jsonl``.
Validation runs in a fresh sandboxed child that is thrown away; expected values never enter it.

Storage is JSON under ``<data_dir>/tools`` (``registry.json``, ``events.jsonl``,
``references/<name>.json``) until the store gets a migration for it. It must not run helper code
in the host process.
"""

from __future__ import annotations

import ast
import json
import math
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from macaron_local import paths
from macaron_local.agent.repl import PromotedSource, Repl
from macaron_local.agent.sandbox import SandboxPolicy
from macaron_local.agent.tools import ToolRegistry, ToolSpec

Case = dict[str, Any]  # {"args": [...], "kwargs": {...}, "expected": ...}


def normalise_case(case: Any) -> Case:
    """``[args, expected]``, ``(args, expected)`` or a dict with args/kwargs/expected."""
    if isinstance(case, dict) and "expected" in case:
        return {
            "args": list(case.get("args", [])),
            "kwargs": dict(case.get("kwargs", {})),
            "expected": case["expected"],
        }
    if isinstance(case, list | tuple) and len(case) == 2:
        args = case[0] if isinstance(case[0], list | tuple) else [case[0]]
        return {"args": list(args), "kwargs": {}, "expected": case[1]}
    raise ValueError("a case is [args, expected] or {'args': [...], 'expected': ...}")


def same(got: Any, want: Any) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        try:
            return math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    return bool(got == want)


class Toolsmith:
    """The candidate / promoted / demoted helpers of this user, shared by all sessions."""

    def __init__(
        self,
        policy: SandboxPolicy,
        root: Path | None = None,
        reserved: frozenset[str] = frozenset(),
    ) -> None:
        self.policy = policy
        self.root = root or paths.data_dir() / "tools"
        self.reserved = reserved | {"save_tool", "promote_tool"}
        self._lock = threading.RLock()

    # --- storage ---------------------------------------------------------------------------

    def _load(self) -> dict[str, dict[str, Any]]:
        path = self.root / "registry.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def _save(self, data: dict[str, dict[str, Any]]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / "registry.json.tmp"
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.root / "registry.json")

    def _log(self, kind: str, name: str, **details: Any) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        line = json.dumps(
            {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "event": kind, "tool": name, **details}
        )
        with open(self.root / "events.jsonl", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def events(self) -> list[dict[str, Any]]:
        path = self.root / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]

    def get(self, name: str) -> dict[str, Any] | None:
        return self._load().get(name)

    def add_references(self, name: str, cases: list[Any]) -> None:
        """Host only: held-out reference cases for ``name`` (never sent to the model)."""
        folder = self.root / "references"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.json").write_text(
            json.dumps([normalise_case(c) for c in cases]), encoding="utf-8"
        )

    def references(self, name: str) -> list[Case]:
        path = self.root / "references" / f"{name}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []

    # --- the life of a helper --------------------------------------------------------------

    def save(self, name: str, source: str, cases: list[Any] | None = None) -> dict[str, Any]:
        """Keep ``source`` (defining function ``name``) as a candidate if its own cases pass."""
        self._check_name(name, source)
        own = [normalise_case(c) for c in (cases or [])]
        failures = self.validate(name, source, own)
        if failures:
            raise ValueError(f"{name} failed its own case: {failures[0]}")
        with self._lock:
            data = self._load()
            data[name] = {
                "name": name,
                "source": source,
                "cases": own,
                "status": "candidate",
                "saved_at": time.time(),
            }
            self._save(data)
        self._log("saved", name, cases=len(own))
        return {"name": name, "status": "candidate", "passed": len(own)}

    def promote(self, name: str) -> dict[str, Any]:
        """Promote a candidate if it passes every held-out reference case."""
        entry = self.get(name)
        if entry is None:
            raise KeyError(name)
        refs = self.references(name)
        if not refs:
            raise ValueError(f"{name} has no held-out reference cases yet; it stays a candidate")
        failed = len(self.validate(name, entry["source"], refs))
        if failed:
            self._log("promotion_refused", name, failed=failed, of=len(refs))
            raise ValueError(
                f"{name} failed {failed} of {len(refs)} held-out reference cases; "
                "it stays a candidate"
            )
        self._set_status(name, "promoted")
        self._log("promoted", name, cases=len(refs))
        return {"name": name, "status": "promoted", "passed": len(refs)}

    def demote(self, name: str, reason: str) -> None:
        if (self.get(name) or {}).get("status") != "promoted":
            return
        self._set_status(name, "demoted", reason=reason)
        self._log("demoted", name, reason=reason)

    def record_failure(self, name: str, error: str) -> None:
        """A promoted tool raised while in use: demote it and log why."""
        self.demote(name, f"failed in use: {error}")

    def revalidate(self) -> list[str]:
        """Check every promoted tool against its (possibly updated) references; demote failures."""
        demoted = []
        for name, entry in self._load().items():
            if entry["status"] == "promoted":
                failures = self.validate(name, entry["source"], self.references(name))
                if failures:
                    self.demote(name, f"failed {len(failures)} reference case(s)")
                    demoted.append(name)
        return demoted

    def promoted(self) -> list[PromotedSource]:
        return [
            PromotedSource(n, e["source"])
            for n, e in sorted(self._load().items())
            if e["status"] == "promoted"
        ]

    def _set_status(self, name: str, status: str, **extra: Any) -> None:
        with self._lock:
            data = self._load()
            data[name] = {**data[name], "status": status, f"{status}_at": time.time(), **extra}
            self._save(data)

    def _check_name(self, name: str, source: str) -> None:
        if not name.isidentifier() or name.startswith("_") or name in self.reserved:
            raise ValueError(f"{name!r} cannot be a tool name")
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"the source of {name} does not parse: {exc.msg}") from None
        if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
            raise ValueError(f"the source does not define a function {name}()")

    # --- validation in a throw-away sandbox -----------------------------------------------

    def validate(self, name: str, source: str, cases: list[Case]) -> list[str]:
        """Run ``cases`` against ``source`` in a fresh sandbox; one line per failing case."""
        policy = replace(self.policy, wall_seconds=min(self.policy.wall_seconds, 20.0))
        failures: list[str] = []
        with Repl(policy) as repl:
            setup = repl.run(source)
            if setup.status != "ok":
                return [f"defining it raised {setup.output}"]
            for case in cases:
                payload = json.dumps([case["args"], case["kwargs"]])
                got = repl.eval_json(
                    f"import json as _j\n_c = _j.loads({payload!r})\n{name}(*_c[0], **_c[1])"
                )
                if got.status != "ok":
                    failures.append(f"{name}(*{case['args']!r}) raised {got.output}")
                elif not same(got.value, case["expected"]):
                    failures.append(f"{name}(*{case['args']!r}) returned {got.value!r}")
        return failures

    # --- as tools in the REPL --------------------------------------------------------------

    def register(self, registry: ToolRegistry) -> None:
        """Add ``toolsmith.save`` / ``toolsmith.promote`` (bound as save_tool / promote_tool)."""
        registry.describe_module("toolsmith", "save a helper you wrote as a tool; promote it")
        registry.add(
            ToolSpec(
                "toolsmith.save",
                self.save,
                "save_tool(func, cases=[[args, expected], ...]) keeps a helper as a candidate",
                plugin="toolsmith",
            )
        )
        registry.add(
            ToolSpec(
                "toolsmith.promote",
                self.promote,
                "promote_tool(name) makes a "
                "candidate a tool in later sessions after held-out validation",
                plugin="toolsmith",
            )
        )
