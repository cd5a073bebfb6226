"""Training examples: building conversations, tokenizing them, and masking the loss.

Owns the example shape (``{"messages": [{"role", "content"}, ...]}``), the conversion of the
bundled data rows into the conversations the route and summary hops really send, and the
encoding of a conversation into tokens plus a target mask that covers exactly the assistant
tokens (content and the end-of-turn token, not the newline the template adds after it). Uses
the serving tokenizer and its chat template, and the turn pipeline's own message builders
(``route_messages``, ``summary_messages``), so training sees what serving sends. Must not import
torch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from macaron_local.errors import RefineError

if TYPE_CHECKING:
    from macaron_local.hcp import Profile

Example = dict[str, Any]


class ChatTokenizer(Protocol):
    def tokenize(self, text: str) -> list[int]: ...
    def is_eog(self, token: int) -> bool: ...
    def render_chat(
        self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool = True
    ) -> str: ...


@dataclass(frozen=True)
class Encoded:
    """One tokenized conversation: ``targets[j]`` says token ``j`` is trained (predicted)."""

    tokens: list[int]
    targets: list[bool]
    exact: bool = True  # False: prompt tokens were not a prefix of the whole; joined per segment
    group: str = ""  # the system prompt: batches are formed within a group to share its prefix
    anchor: bool = False  # answers kept close to an anchor adapter (TrainConfig.kl_weight)

    @property
    def n_targets(self) -> int:
        return sum(self.targets)


def load_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Read one JSON object per non-empty line; errors name the file and line."""
    path = Path(path)
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise RefineError(f"{path}:{n}: invalid JSON ({exc.msg})") from exc
    return rows


def data_hash(examples: Iterable[Example]) -> str:
    """sha256 of the canonical JSON of the examples, in order."""
    h = hashlib.sha256()
    for ex in examples:
        h.update(json.dumps(ex, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode())
        h.update(b"\n")
    return h.hexdigest()


def route_examples(
    records: Iterable[Mapping[str, str]], profile: Profile, tools: Mapping[str, str] | None = None
) -> list[Example]:
    """``{"text","label"}`` rows -> the route hop's own messages, answered by the bare label.

    A row may carry ``"previous": [label, digest]`` (a follow-up and the turn before it).

    ``tools`` (name -> one-line description) fill the route prompt's ``{tools}``; serving
    passes :func:`macaron_local.turns.tools.tool_descriptions`, and so does ``bootstrap``.
    A long request is clipped as serving clips it: in the profile's base's own tokens.
    """
    from macaron_local.engine.tokenizer import shared_tokenizer
    from macaron_local.manifests import get_manifest, locate
    from macaron_local.turns.route import clip_middle, route_messages

    labels = set(profile.labels)
    tok = shared_tokenizer(locate(get_manifest(profile.base.model)))
    out = []
    for row in records:
        if row["label"] not in labels:
            raise RefineError(
                f"route row with unknown label {row['label']!r}: {row['text'][:60]!r}"
            )
        prev = row.get("previous")  # [label, digest] of the previous turn (follow-up rows)
        previous = (prev[0], prev[1]) if prev else None
        msgs = route_messages(profile, clip_middle(tok, row["text"]), dict(tools or {}), previous)
        out.append({"messages": [*msgs, {"role": "assistant", "content": row["label"]}]})
    return out


def summary_examples(
    rows: Iterable[Mapping[str, str]], profile: Profile, tools: Mapping[str, str] | None = None
) -> list[Example]:
    """``{"label","request","answer","summary"}`` rows -> the summary hop's own messages.

    The summary hop continues the answering label's view (its system prompt, the request, the
    answer) with the profile's summary request; only the summary is trained (the answer is
    marked ``"train": False``).
    """
    from macaron_local.turns.summary import summary_messages

    out = []
    for r in rows:
        view = [
            {"role": "system", "content": profile.system_prompt(r["label"], tools)},
            {"role": "user", "content": r["request"]},
        ]
        msgs: list[dict[str, str | bool]] = [
            {**m, "train": False} if m["role"] == "assistant" else {**m}
            for m in summary_messages(profile, view, r["answer"])
        ]
        out.append({"messages": [*msgs, {"role": "assistant", "content": r["summary"]}]})
    return out


def check_messages(example: Example) -> list[dict[str, str]]:
    msgs = example.get("messages") if isinstance(example, Mapping) else None
    if not msgs or not all(isinstance(m, Mapping) and {"role", "content"} <= set(m) for m in msgs):
        raise RefineError(f"an example needs messages with role and content: {str(example)[:80]}")
    if not any(m["role"] == "assistant" and m.get("train", True) for m in msgs):
        raise RefineError(f"an example has no trained assistant message: {str(example)[:80]}")
    return [dict(m) for m in msgs]


def _spans(tok: ChatTokenizer, msgs: list[dict[str, Any]]) -> tuple[str, list[tuple[int, int]]]:
    """The full rendering and, per trained assistant message, its (start, end) character span."""
    trained = [i for i, m in enumerate(msgs) if m["role"] == "assistant" and m.get("train", True)]
    msgs = [{"role": m["role"], "content": m["content"]} for m in msgs]
    full = tok.render_chat(msgs, add_generation_prompt=False)
    spans = []
    for i in trained:
        prompt = tok.render_chat(msgs[:i], add_generation_prompt=True)
        upto = tok.render_chat(msgs[: i + 1], add_generation_prompt=False)
        if not (full.startswith(prompt) and full.startswith(upto)):
            raise NotAppendOnly("the chat template does not render conversations append-only")
        spans.append((len(prompt), len(upto)))
    return full, spans


class NotAppendOnly(RefineError):
    """The chat template renders a longer conversation differently from its start (Qwen3 drops
    earlier turns' reasoning), so one rendering cannot hold every turn's targets."""


def encode_turns(tok: ChatTokenizer, example: Example, max_len: int) -> list[Encoded]:
    """``encode``, or, under a template that is not append-only, one example per trained
    assistant turn (the conversation up to it, that turn alone trained): what serving sends."""
    try:
        one = encode(tok, example, max_len)
        return [one] if one is not None else []
    except NotAppendOnly:
        msgs = check_messages(example)
    out = []
    for i, m in enumerate(msgs):
        if m["role"] == "assistant" and m.get("train", True):
            upto = [{**p, "train": False} if p["role"] == "assistant" else p for p in msgs[:i]]
            enc = encode(tok, {**example, "messages": [*upto, m]}, max_len)
            out += [enc] if enc is not None else []
    return out


def encode(tok: ChatTokenizer, example: Example, max_len: int) -> Encoded | None:
    """Tokens and loss targets for one conversation; None if no target fits in ``max_len``.

    Each assistant turn is trained from the first token after the generation prompt
    (``<|im_start|>assistant\\n``) through its end-of-turn token (``<|im_end|>``).
    """
    msgs = check_messages(example)
    full, spans = _spans(tok, msgs)
    cuts = sorted({0, len(full), *(c for span in spans for c in span)})
    pieces = [tok.tokenize(full[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    bounds = {0: 0}
    for (a, b), piece in zip(zip(cuts, cuts[1:], strict=False), pieces, strict=True):
        bounds[b] = bounds[a] + len(piece)
    tokens = [t for p in pieces for t in p]
    whole = tok.tokenize(full)
    # serving tokenizes each prompt as one string: the per-segment join must equal that
    exact = tokens == whole and all(
        tok.tokenize(full[:start]) == whole[: bounds[start]] for start, _ in spans
    )
    targets = [False] * len(tokens)
    for start, end in spans:
        lo, hi = bounds[start], bounds[end]
        eog = [j for j in range(lo, hi) if tok.is_eog(tokens[j])]
        hi = eog[-1] + 1 if eog else hi
        targets[lo:hi] = [True] * (hi - lo)
    tokens, targets = tokens[:max_len], targets[:max_len]
    if not any(targets):
        return None
    group = msgs[0]["content"] if msgs[0]["role"] == "system" else ""
    anchor = bool(example.get("anchor"))
    return Encoded(tokens=tokens, targets=targets, exact=exact, group=group, anchor=anchor)
