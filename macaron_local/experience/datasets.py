"""Training and held-out sets built from the experience log for one label.

Owns the mapping from kept turns and their signals to what the refine loop trains on:

- **SFT**: accepted answers (thumbs up, never thumbs down) and corrected answers (the user's
  edit replaces the answer);
- **preference pairs** (DPO): the correction over the original answer, and an accepted retry
  over the answer it replaced;
- **routing examples** (L0 only): a manual re-route of a routed request is a label correction,
  trained as a route-hop example under the profile's own route prompt;
- **checkable prompts** (GRPO-style): turns with an automatic checker attached;
- the **replay slice** of the label's own training data is drawn by the refine loop
  (``refine.bootstrap.replay_slice``) and passed through, so it does not forget.

Every request is asked in a fresh view (the label's system prompt, then the request), which is
what a new chat sends. A deterministic slice (by request hash) is held out for the promotion
gate; the same request always lands on the same side. Must not import torch or write anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from macaron_local.experience.log import ExperienceRow

Example = dict[str, Any]


@dataclass
class Split:
    """One side (train or held-out) of the experience sets."""

    sft: list[Example] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)  # prompt, chosen, rejected
    routing: list[dict[str, str]] = field(default_factory=list)  # text, label
    checkable: list[dict[str, Any]] = field(default_factory=list)  # prompt, checker

    @property
    def size(self) -> int:
        return len(self.sft) + len(self.pairs) + len(self.routing) + len(self.checkable)


@dataclass
class Datasets:
    label: str
    train: Split
    heldout: Split
    replay: list[Example]
    n_rows: int

    def counts(self) -> dict[str, Any]:
        def c(s: Split) -> dict[str, int]:
            return {
                "sft": len(s.sft),
                "pairs": len(s.pairs),
                "routing": len(s.routing),
                "checkable": len(s.checkable),
            }

        return {
            "rows": self.n_rows,
            "train": c(self.train),
            "heldout": c(self.heldout),
            "replay": len(self.replay),
        }


def is_heldout(request: str, fraction: float) -> bool:
    h = int(hashlib.sha256(request.strip().lower().encode()).hexdigest()[:8], 16)
    return (h % 1000) < fraction * 1000


def prompt_messages(profile: Any, label: str, request: str, tools: Mapping[str, str]) -> list:
    return [
        {"role": "system", "content": profile.system_prompt(label, tools)},
        {"role": "user", "content": request},
    ]


def _accepted(row: ExperienceRow) -> bool:
    return row.has("up") and not row.has("down") and not row.has("correction")


def _target(row: ExperienceRow) -> str | None:
    if row.has("correction"):
        return row.last("correction")
    return row.answer if _accepted(row) else None


def _add(
    split: Split,
    row: ExperienceRow,
    by_turn: dict[str, ExperienceRow],
    label: str,
    profile: Any,
    tools: Mapping[str, str],
) -> None:
    if row.label == label:
        prompt = prompt_messages(profile, label, row.request, tools)
        target = _target(row)
        if target:
            split.sft.append({"messages": [*prompt, {"role": "assistant", "content": target}]})
        if row.has("correction") and target and target.strip() != row.answer.strip():
            split.pairs.append({"prompt": prompt, "chosen": target, "rejected": row.answer})
        for sib_id in [s.value for s in row.signals if s.kind == "retry"]:
            sib = by_turn.get(sib_id)
            better = _target(sib) if sib is not None and sib.label == label else None
            if better and better.strip() != row.answer.strip():
                split.pairs.append({"prompt": prompt, "chosen": better, "rejected": row.answer})
        if row.checker:
            split.checkable.append({"prompt": prompt, "checker": row.checker})
    if label == profile.router_label and row.has("reroute"):
        split.routing.append({"text": row.request, "label": row.last("reroute") or ""})


def build(
    rows: Sequence[ExperienceRow],
    *,
    label: str,
    profile: Any,
    tools: Mapping[str, str],
    heldout_fraction: float = 0.2,
    replay: Sequence[Example] = (),
) -> Datasets:
    """Split ``rows`` into train / held-out sets for ``label``; ``replay`` is passed through."""
    by_turn = {r.turn_id: r for r in rows}
    train, held = Split(), Split()
    for row in rows:
        _add(
            held if is_heldout(row.request, heldout_fraction) else train,
            row,
            by_turn,
            label,
            profile,
            tools,
        )
    return Datasets(label, train, held, list(replay), len(rows))
