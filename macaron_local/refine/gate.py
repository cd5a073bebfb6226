"""The promotion gate: measure a revision before/after on the served engine, decide, and plot.

Owns :class:`GateConfig` (the regression threshold and the minimum held-out gain), the metrics,
measured as the revision would be served: on llama.cpp over the profile's base GGUF (its served
quantization), the adapter under test loaded into the engine: held-out experience (answer NLL
on accepted/corrected answers, preference accuracy, routing accuracy through the route hop's
own prompt and grammar, checker success of a greedy answer) and the fixed regression suite of
the label from ``bench/eval`` (L0: routing accuracy on ``route_eval.jsonl`` plus answer NLL on
the L0 rows of ``summary_turns.jsonl``; L2: NLL of the reference solutions of
``code_tasks.jsonl`` plus its summary rows; L1/L3: NLL on their rows of
``summary_turns.jsonl``), :func:`run_gate` (both sides on one engine: the app's, or one of its
own), the pure decision :func:`decide`, and the PNG plots. Must not: touch the policy record
(the loop promotes only when :func:`decide` passes), import torch, or write anything but the
plots it is asked for.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from macaron_local.engine import BACKGROUND, Engine, Sampling
from macaron_local.errors import CancelledError, EngineError, RefineError
from macaron_local.refine.data import ChatTokenizer, Encoded

HIGHER_IS_BETTER = {"route_acc", "pref_acc", "check"}
GATE_SLOT = "refine-gate"  # the engine's KV slot for the gate's routes and answers
NLL_SLOT = "refine-gate-nll"  # and for its teacher-forced conversations
MAX_LEN = 768  # tokens of one measured conversation


class GateConfig(BaseModel):
    """Thresholds. ``max_regression``: absolute for accuracies, relative for NLL (0.02 = 2%);
    ``run_refine`` takes it from the profile's ``[experience] max_regression``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_regression: Annotated[float, Field(ge=0, le=1)] = 0.02
    min_gain: Annotated[float, Field(ge=0)] = 0.0
    regression_limit: Annotated[int, Field(ge=0)] = 0  # rows per suite file (0: all)
    eval_dir: str | None = None  # default: bench/eval beside the package
    check_max_tokens: Annotated[int, Field(ge=1)] = 48


@dataclass(frozen=True)
class Decision:
    passed: bool
    reasons: list[str]
    gains: dict[str, float]


def eval_dir(cfg: GateConfig) -> Path:
    if cfg.eval_dir:
        return Path(cfg.eval_dir)
    return Path(__file__).resolve().parents[2] / "bench" / "eval"


def _gain(name: str, before: float, after: float) -> float:
    """Improvement of a metric: absolute for accuracies, relative for NLL. Rounded to 9 places:
    0.97 - 0.99 is -0.020000000000000018 in floats, and a drop of exactly the threshold (4 more
    misroutes in 200) is not "beyond" it."""
    if name in HIGHER_IS_BETTER:
        return round(after - before, 9)
    return round((before - after) / before if before else before - after, 9)


def decide(
    before: Mapping[str, Mapping[str, float]],
    after: Mapping[str, Mapping[str, float]],
    cfg: GateConfig,
) -> Decision:
    """Pass when a held-out metric improves by more than ``min_gain``, none of them gets worse
    by more than ``max_regression``, and no regression-suite metric drops more than that."""
    reasons, gains = [], {}
    held_b, held_a = before.get("heldout", {}), after.get("heldout", {})
    if not held_b:
        reasons.append("no held-out experience to judge by")
    for name in held_b:
        gains[f"heldout.{name}"] = g = _gain(name, held_b[name], held_a[name])
        if g < -cfg.max_regression:
            reasons.append(f"held-out {name} got worse: {held_b[name]:.4f} -> {held_a[name]:.4f}")
    if held_b and not any(gains[f"heldout.{n}"] > cfg.min_gain for n in held_b):
        reasons.append(f"no held-out metric improved by more than {cfg.min_gain}")
    reg_b, reg_a = before.get("regression", {}), after.get("regression", {})
    if not reg_b:
        reasons.append("no regression suite for this label")
    for name in reg_b:
        gains[f"regression.{name}"] = g = _gain(name, reg_b[name], reg_a[name])
        if g < -cfg.max_regression:
            reasons.append(
                f"regression suite {name} regressed beyond {cfg.max_regression}: "
                f"{reg_b[name]:.4f} -> {reg_a[name]:.4f}"
            )
    return Decision(not reasons, reasons, gains)


# --- metrics (on the served engine) -----------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One side of the gate: the served engine with one adapter active (None: the base)."""

    engine: Engine
    tok: ChatTokenizer  # the served file's own vocabulary and chat template
    adapter: str | None
    cancel: threading.Event | None = None

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise CancelledError("refine run cancelled")

    def logprobs(self, enc: Encoded) -> npt.NDArray[np.float64]:
        """Log-probability of each target token, teacher-forced through llama.cpp; the prefix
        the previous conversation shared with this one (its system prompt) is not read again."""
        self.check()
        rows = np.flatnonzero(enc.targets[1:])  # row j predicts token j + 1
        logits = self.engine.eval_logits(
            enc.tokens,
            adapter=self.adapter,
            all_positions=True,
            first=int(rows[0]),
            slot=NLL_SLOT,
        )
        picked = logits[rows - rows[0]].astype(np.float64)
        top = picked.max(1, keepdims=True)
        norm = top[:, 0] + np.log(np.exp(picked - top).sum(1))
        return picked[np.arange(len(rows)), np.asarray(enc.tokens)[rows + 1]] - norm

    def complete(self, messages: Sequence[Mapping[str, str]], **kw: Any) -> str:
        """The text the engine produces for ``messages``, rendered as serving renders them."""
        self.check()
        return self.engine.complete(
            self.engine.chat_tokens([dict(m) for m in messages]),
            adapter=self.adapter,
            slot=GATE_SLOT,
            priority=BACKGROUND,  # a turn of the app that shares the engine goes first
            cancel=self.cancel,
            **kw,
        ).text


def _encode(side: Side, examples: Sequence[dict], max_len: int) -> list[Encoded]:
    from macaron_local.refine.data import encode_turns

    return [e for ex in examples for e in encode_turns(side.tok, ex, max_len)]


def answer_nll(side: Side, examples: Sequence[dict], *, max_len: int = MAX_LEN) -> float:
    """Mean NLL per assistant token (teacher-forced)."""
    total, n = 0.0, 0
    for enc in _encode(side, examples, max_len):
        lp = side.logprobs(enc)
        total, n = total - float(lp.sum()), n + len(lp)
    return total / max(1, n)


def route_accuracy(
    side: Side, profile: Any, rows: Sequence[Mapping[str, Any]], tools: Mapping[str, str]
) -> float:
    """Share of rows the route hop sends to their label: the profile's router prompt, grammar
    and decode budget, greedy; an answer that is no label counts as the fallback label."""
    from macaron_local.turns.route import clip_middle, route_messages

    right = 0
    for row in rows:
        prev = row.get("previous")  # [label, digest] of the turn before a follow-up
        msgs = route_messages(
            profile,
            clip_middle(side.engine, row["text"]),
            tools,
            (prev[0], prev[1]) if prev else None,
        )
        text = side.complete(
            msgs,
            grammar=profile.router.grammar,
            max_tokens=profile.router.decode_budget,
            sampling=Sampling(temperature=0.0),
        ).strip()
        routed = text if text in profile.router.labels else profile.router.fallback
        right += routed == row["label"]
    return right / max(1, len(rows))


def pref_accuracy(
    side: Side, pairs: Sequence[Mapping[str, Any]], *, max_len: int = MAX_LEN
) -> float:
    """Share of pairs where the chosen answer has the higher summed log-probability."""

    def score(p: Mapping[str, Any], key: str) -> float:
        msgs = [*p["prompt"], {"role": "assistant", "content": p[key]}]
        return sum(
            float(side.logprobs(e).sum()) for e in _encode(side, [{"messages": msgs}], max_len)
        )

    if not pairs:
        return 0.0
    return sum(score(p, "chosen") > score(p, "rejected") for p in pairs) / len(pairs)


def checker_success(
    side: Side, profile: Any, label: str, checkable: Sequence[Mapping[str, Any]], max_tokens: int
) -> float:
    """Share of prompts whose answer passes its checker: the label's sampling from the profile,
    greedy (the gate must be deterministic), the answer as serving keeps it."""
    from macaron_local.experience.checkers import check
    from macaron_local.turns.answer import sampling, visible

    if not checkable:
        return 0.0
    greedy = replace(sampling(profile.sampling_for(label)), temperature=0.0)
    ok = 0
    for item in checkable:
        text = side.complete(item["prompt"], max_tokens=max_tokens, sampling=greedy)
        ok += check(item["checker"], visible(text))
    return ok / len(checkable)


def heldout_metrics(
    side: Side, split: Any, cfg: GateConfig, profile: Any, label: str, tools: Mapping[str, str]
) -> dict[str, float]:
    out: dict[str, float] = {}
    if split.sft:
        out["nll"] = answer_nll(side, split.sft)
    if split.pairs:
        out["pref_acc"] = pref_accuracy(side, split.pairs)
    if split.routing:
        out["route_acc"] = route_accuracy(side, profile, split.routing, tools)
    if split.checkable:
        out["check"] = checker_success(side, profile, label, split.checkable, cfg.check_max_tokens)
    return out


def _jsonl(path: Path, limit: int) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return rows[:limit] if limit else rows


def _code_references(folder: Path, limit: int) -> list[tuple[str, str]]:
    """(prompt, reference answer) for the coding tasks, the answer as a ```python block."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_code_solutions", folder / "code_solutions.py")
    if spec is None or spec.loader is None or not (folder / "code_solutions.py").is_file():
        return []
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = []
    for task in _jsonl(folder / "code_tasks.jsonl", limit):
        fn = getattr(module, task["entry_point"], None)
        if fn is not None:
            out.append((task["prompt"], f"```python\n{inspect.getsource(fn).strip()}\n```"))
    return out


def regression_examples(
    label: str, profile: Any, tools: Mapping[str, str], cfg: GateConfig
) -> tuple[list[dict], list[dict[str, str]]]:
    """(answer examples, routing rows) of the fixed suite for ``label``."""
    from macaron_local.experience.datasets import prompt_messages

    folder, lim = eval_dir(cfg), cfg.regression_limit
    pairs = [
        (r["request"], r["answer"])
        for r in _jsonl(folder / "summary_turns.jsonl", 0)
        if r["label"] == label
    ]
    pairs = pairs[:lim] if lim else pairs
    if "coding" in profile.roles_of(label):
        pairs += _code_references(folder, lim)
    examples = [
        {
            "messages": [
                *prompt_messages(profile, label, q, tools),
                {"role": "assistant", "content": a},
            ]
        }
        for q, a in pairs
    ]
    routing = _jsonl(folder / "route_eval.jsonl", lim) if label == profile.router_label else []
    return examples, [{"text": r["text"], "label": r["label"]} for r in routing]


def regression_metrics(
    side: Side, label: str, profile: Any, tools: Mapping[str, str], cfg: GateConfig
) -> dict[str, float]:
    examples, routing = regression_examples(label, profile, tools, cfg)
    out: dict[str, float] = {}
    if routing:
        out["route_acc"] = route_accuracy(side, profile, routing, tools)
    if examples:
        out["answer_nll"] = answer_nll(side, examples)
    return out


def measure(
    side: Side, heldout: Any, label: str, profile: Any, tools: Mapping[str, str], cfg: GateConfig
) -> dict[str, dict[str, float]]:
    """Every gate metric of one side: held-out experience and the label's regression suite."""
    return {
        "heldout": heldout_metrics(side, heldout, cfg, profile, label, tools),
        "regression": regression_metrics(side, label, profile, tools, cfg),
    }


# --- the gate run -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GateRun:
    """Both sides' metrics, the decision, and the engine they were measured on."""

    before: dict[str, dict[str, float]]
    after: dict[str, dict[str, float]]
    decision: Decision
    measured_on: str  # "<base id> (<quantization>) on llama.cpp <version>"
    seconds: float


def served_name(manifest: Any) -> str:
    from importlib.metadata import version

    quant = manifest.quantization or "quantization not recorded"
    return f"{manifest.id} ({quant}) on llama.cpp (llama-cpp-python {version('llama-cpp-python')})"


@contextmanager
def served_engine(profile: Any, engine: Engine | None = None) -> Iterator[Engine]:
    """``engine`` (a runtime's: one engine owns llama.cpp), checked to serve the profile's
    base; without one, an engine of its own over the profile's base GGUF and resources, as
    ``Runtime.open`` builds it, closed after."""
    from macaron_local.manifests import get_manifest, verified_path
    from macaron_local.turns.pipeline import engine_config

    manifest = get_manifest(profile.base.model)
    if engine is not None:
        if engine.base_sha256 not in (None, manifest.sha256):
            raise RefineError(
                f"the engine given to the gate serves base sha256 {engine.base_sha256[:12]}…, "
                f"not this profile's base {manifest.id} ({manifest.sha256[:12]}…)"
            )
        yield engine
        return
    own = Engine(
        verified_path(manifest.id),
        engine_config(profile.resources, len(profile.labels)),
        base_sha256=manifest.sha256,
    )
    try:
        yield own
    finally:
        own.close()


def run_gate(
    candidate: Path,
    *,
    parent: Path | None,
    label: str,
    profile: Any,
    heldout: Any,
    cfg: GateConfig,
    tools: Mapping[str, str],
    engine: Engine | None = None,
    cancel: threading.Event | None = None,
) -> GateRun:
    """Measure the adapter serving ``label`` now (``parent``; None: the base) and ``candidate``
    on the served engine (see :func:`served_engine`), each loaded there under a temporary name
    and unloaded after, and decide."""
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.manifests import get_manifest

    started = time.perf_counter()
    tag = f"refine-gate-{uuid.uuid4().hex[:8]}"
    with served_engine(profile, engine) as eng:
        tok = shared_tokenizer(eng.info.path)
        names = {"before": f"{tag}-before" if parent else None, "after": f"{tag}-after"}
        try:
            if parent is not None:
                eng.load_adapter(f"{tag}-before", parent)
            eng.load_adapter(f"{tag}-after", candidate)
            sides = {
                k: measure(Side(eng, tok, name, cancel), heldout, label, profile, tools, cfg)
                for k, name in names.items()
            }
        finally:
            for name in names.values():
                if name is not None:
                    with suppress(EngineError):  # an engine closed under the run has none left
                        eng.unload_adapter(name)
    return GateRun(
        sides["before"],
        sides["after"],
        decide(sides["before"], sides["after"], cfg),
        served_name(get_manifest(profile.base.model)),
        round(time.perf_counter() - started, 1),
    )


# --- plots ------------------------------------------------------------------------------------


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_series(
    path: Path, series: Mapping[str, Sequence[float]], *, title: str, ylabel: str
) -> Path:
    """One line per non-empty series (loss or reward per update)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
    drawn = False
    for name, ys in series.items():
        if ys:
            ax.plot(
                range(1, len(ys) + 1), ys, lw=1, marker="." if len(ys) < 40 else None, label=name
            )
            drawn = True
    if not drawn:
        ax.text(0.5, 0.5, "nothing to plot in this run", ha="center", transform=ax.transAxes)
    ax.set_xlabel("update")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_gate(
    path: Path,
    before: Mapping[str, Mapping[str, float]],
    after: Mapping[str, Mapping[str, float]],
    *,
    title: str,
) -> Path:
    """Grouped bars: every gate metric before and after."""
    plt = _plt()
    names = [f"{s}.{m}" for s in ("heldout", "regression") for m in before.get(s, {})]
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(names) + 2), 3.5), dpi=100)
    xs = range(len(names))

    def get(d: Mapping[str, Mapping[str, float]], n: str) -> float:
        return d.get(n.split(".")[0], {}).get(n.split(".", 1)[1], 0.0)

    ax.bar([x - 0.2 for x in xs], [get(before, n) for n in names], 0.4, label="before")
    ax.bar([x + 0.2 for x in xs], [get(after, n) for n in names], 0.4, label="after")
    ax.set_xticks(list(xs), names, rotation=15, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
