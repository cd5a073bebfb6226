"""The promotion gate: measure a revision before/after, decide, and draw the report's plots.

Owns :class:`GateConfig` (the regression threshold and the minimum held-out gain), the metrics
(torch, teacher-forced on the frozen base with the LoRA under test attached): held-out
experience (answer NLL on accepted/corrected answers, preference accuracy, routing accuracy,
checker success of a greedy answer) and the fixed regression suite of the label from
``bench/eval`` (L0: routing accuracy on ``route_eval.jsonl`` plus answer NLL on the L0 rows of
``summary_turns.jsonl``; L2: NLL of the reference solutions of ``code_tasks.jsonl`` plus its
summary rows; L1/L3: NLL on their rows of ``summary_turns.jsonl``), the pure decision
:func:`decide`, and the PNG plots. Must not: touch the policy record (the loop promotes only
when :func:`decide` passes) or write anything but the plots it is asked for.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

HIGHER_IS_BETTER = {"route_acc", "pref_acc", "check"}
ROUTE_DIGIT_OFFSET = 1  # targets are "L", digit, <|im_end|>: the digit is the second target


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


# --- metrics (torch) --------------------------------------------------------------------------


def _by_group(items: Sequence[Any], size: int) -> list[list[Any]]:
    groups: dict[str, list[Any]] = {}
    for e in items:
        groups.setdefault(e.group, []).append(e)
    return [g[i : i + size] for g in groups.values() for i in range(0, len(g), size)]


def answer_nll(
    model: Any,
    tok: Any,
    examples: Sequence[dict],
    *,
    max_len: int = 768,
    bf16: bool = True,
    batch: int = 8,
) -> float:
    """Mean NLL per assistant token (teacher-forced)."""
    import torch

    from macaron_local.refine.train import collate, encode_all, loss_on_targets, shared_prefix

    enc = encode_all(tok, examples, max_len)
    total, n = 0.0, 0
    with torch.no_grad():
        for chunk in _by_group(enc, batch):
            tokens, targets = collate(chunk)
            loss = loss_on_targets(model, tokens, targets, bf16, shared_prefix(chunk))
            k = sum(e.n_targets for e in chunk)
            total, n = total + loss.item() * k, n + k
    return total / max(1, n)


def route_accuracy(
    model: Any,
    tok: Any,
    profile: Any,
    rows: Sequence[Mapping[str, str]],
    tools: Mapping[str, str],
    *,
    bf16: bool = True,
    batch: int = 32,
) -> float:
    """Share of rows whose label digit has the highest logit among the profile's labels, at the
    position where the labels diverge (what the route grammar's choice depends on)."""
    import torch

    from macaron_local.refine.data import route_examples
    from macaron_local.refine.train import collate, encode_all, shared_prefix

    enc = encode_all(tok, route_examples(rows, profile, tools), 1024)
    probe = [{"text": "x", "label": lb} for lb in profile.labels]
    digit = {
        r["label"]: e.tokens[e.targets.index(True) + ROUTE_DIGIT_OFFSET]
        for e, r in zip(
            encode_all(tok, route_examples(probe, profile, tools), 1024), probe, strict=True
        )
    }
    labels = sorted(digit)
    cand = torch.tensor([digit[lb] for lb in labels])
    right = 0
    with torch.no_grad():
        for start in range(0, len(enc), batch):
            chunk, want = enc[start : start + batch], rows[start : start + batch]
            tokens, _ = collate(chunk)
            p = shared_prefix(chunk)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                hidden = model.hidden(tokens[:, p:], prefix=tokens[0, :p] if p else None)
            pos = torch.tensor([e.targets.index(True) - p for e in chunk])
            logits = model.logits(hidden[torch.arange(len(chunk)), pos].float())[:, cand]
            picked = [labels[i] for i in logits.argmax(-1).tolist()]
            right += sum(a == r["label"] for a, r in zip(picked, want, strict=True))
    return right / max(1, len(rows))


def pref_accuracy(model: Any, tok: Any, pairs: Sequence[Mapping[str, Any]]) -> float:
    """Share of pairs where the chosen answer has the higher summed log-probability."""
    from macaron_local.refine.refine_loop import pair_examples, seq_logprobs

    if not pairs:
        return 0.0
    chosen, rejected = pair_examples(tok, pairs)
    import torch

    with torch.no_grad():
        c, r = seq_logprobs(model, chosen), seq_logprobs(model, rejected)
    return float((c > r).float().mean())


def checker_success(
    model: Any, tok: Any, checkable: Sequence[Mapping[str, Any]], max_tokens: int
) -> float:
    """Share of prompts whose greedy answer passes its checker."""
    from macaron_local.experience.checkers import check
    from macaron_local.refine.refine_loop import generate

    if not checkable:
        return 0.0
    ok = 0
    for item in checkable:
        text = generate(model, tok, item["prompt"], n=1, max_tokens=max_tokens, temperature=0)[0]
        ok += check(item["checker"], text)
    return ok / len(checkable)


def heldout_metrics(
    model: Any, tok: Any, split: Any, cfg: GateConfig, profile: Any, tools: Mapping[str, str]
) -> dict[str, float]:
    out: dict[str, float] = {}
    if split.sft:
        out["nll"] = answer_nll(model, tok, split.sft)
    if split.pairs:
        out["pref_acc"] = pref_accuracy(model, tok, split.pairs)
    if split.routing:
        out["route_acc"] = route_accuracy(model, tok, profile, split.routing, tools)
    if split.checkable:
        out["check"] = checker_success(model, tok, split.checkable, cfg.check_max_tokens)
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
    model: Any, tok: Any, label: str, profile: Any, tools: Mapping[str, str], cfg: GateConfig
) -> dict[str, float]:
    examples, routing = regression_examples(label, profile, tools, cfg)
    out: dict[str, float] = {}
    if routing:
        out["route_acc"] = route_accuracy(model, tok, profile, routing, tools)
    if examples:
        out["answer_nll"] = answer_nll(model, tok, examples)
    return out


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
