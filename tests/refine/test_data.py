"""Loss masks cover exactly the assistant tokens, rendered with the serving chat template."""

from __future__ import annotations

import pytest

from macaron_local.errors import RefineError
from macaron_local.hcp import load_profile
from macaron_local.refine.data import data_hash, encode, route_examples, summary_examples

AGENT = {
    "messages": [
        {"role": "system", "content": "You are the agent."},
        {"role": "user", "content": "What time is it?"},
        {"role": "assistant", "content": "```repl\nprint(clock.now())\n```"},
        {"role": "tool", "content": "2025-03-14 09:30"},
        {"role": "assistant", "content": "It is 09:30."},
    ]
}


def _trained_text(tokenizer, enc) -> list[str]:
    """The trained tokens as contiguous runs of text (end-of-turn tokens written out)."""
    (im_end,) = tokenizer.tokenize("<|im_end|>")

    def text(tokens: list[int]) -> str:
        return "".join("<|im_end|>" if t == im_end else tokenizer.detokenize([t]) for t in tokens)

    runs, cur = [], []
    for tok, on in zip(enc.tokens, enc.targets, strict=True):
        if on:
            cur.append(tok)
        elif cur:
            runs.append(text(cur))
            cur = []
    if cur:
        runs.append(text(cur))
    return runs


def test_mask_covers_each_assistant_turn_and_its_end_token(tokenizer) -> None:
    enc = encode(tokenizer, AGENT, max_len=512)
    assert enc.exact
    assert _trained_text(tokenizer, enc) == [
        "```repl\nprint(clock.now())\n```<|im_end|>",
        "It is 09:30.<|im_end|>",
    ]
    full = tokenizer.tokenize(tokenizer.render_chat(AGENT["messages"], add_generation_prompt=False))
    assert enc.tokens == full


def test_prompt_tokens_are_the_served_prompt(tokenizer) -> None:
    enc = encode(tokenizer, AGENT, max_len=512)
    first = enc.targets.index(True)
    served = tokenizer.tokenize(tokenizer.render_chat(AGENT["messages"][:2]))
    assert enc.tokens[:first] == served


def test_route_example_is_what_the_route_hop_sends(tokenizer) -> None:
    profile = load_profile("tall-local")
    tools = {"reminders.add": "Set a reminder."}
    (ex,) = route_examples([{"text": "remind me at 5", "label": "L1"}], profile, tools)
    from macaron_local.turns.route import route_messages

    assert ex["messages"][:-1] == route_messages(profile, "remind me at 5", tools)
    assert ex["messages"][0]["content"] == profile.router_prompt(tools)
    assert "reminders.add" in ex["messages"][0]["content"]
    enc = encode(tokenizer, ex, max_len=512)
    assert _trained_text(tokenizer, enc) == ["L1<|im_end|>"]
    with pytest.raises(RefineError, match="unknown label"):
        route_examples([{"text": "x", "label": "L9"}], profile)


def test_a_follow_up_row_is_routed_with_its_previous_turn() -> None:
    from macaron_local.turns.route import route_messages

    profile = load_profile("tall-local")
    row = {"text": "and bananas", "label": "L1", "previous": ["L1", "add milk to my list"]}
    (ex,) = route_examples([row], profile, {})
    assert ex["messages"][:-1] == route_messages(
        profile, "and bananas", {}, ("L1", "add milk to my list")
    )
    assert ex["messages"][1]["content"].startswith("Previous turn: L1 — add milk to my list\n")


def test_summary_example_is_what_the_summary_hop_sends(tokenizer) -> None:
    from macaron_local.turns.summary import summary_messages

    profile = load_profile("tall-local")
    tools = {"todos": "the user's todos"}
    row = {
        "label": "L1",
        "request": "sort my todos",
        "answer": "Done: 3 todos sorted.",
        "summary": "The user asked to sort their todos; the agent sorted 3.",
    }
    (ex,) = summary_examples([row], profile, tools)
    view = [
        {"role": "system", "content": profile.system_prompt("L1", tools)},
        {"role": "user", "content": "sort my todos"},
    ]
    served = summary_messages(profile, view, "Done: 3 todos sorted.")
    assert [{"role": m["role"], "content": m["content"]} for m in ex["messages"][:-1]] == served
    # earlier turns in the view never reach the summary prompt (the model copied their notes)
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "note"}]
    longer = [view[0], *history, view[1]]
    assert summary_messages(profile, longer, "Done: 3 todos sorted.") == served
    enc = encode(tokenizer, ex, max_len=1024)
    assert enc.exact
    assert _trained_text(tokenizer, enc) == [row["summary"] + "<|im_end|>"]  # not the answer


def test_truncation_keeps_only_what_fits(tokenizer) -> None:
    enc = encode(tokenizer, AGENT, max_len=512)
    second = len(enc.tokens) - 8
    short = encode(tokenizer, AGENT, max_len=second)
    assert len(short.tokens) == second and short.targets == enc.targets[:second]
    assert encode(tokenizer, AGENT, max_len=enc.targets.index(True)) is None


def test_bad_examples_are_named_errors(tokenizer) -> None:
    with pytest.raises(RefineError, match="no trained assistant"):
        encode(tokenizer, {"messages": [{"role": "user", "content": "hi"}]}, 64)
    with pytest.raises(RefineError, match="role and content"):
        encode(tokenizer, {"text": "hi"}, 64)


def test_data_hash_depends_on_content_and_order() -> None:
    a, b = {"messages": [{"role": "user", "content": "a"}]}, {"messages": []}
    assert data_hash([a, b]) == data_hash([dict(a), b])
    assert data_hash([a, b]) != data_hash([b, a])


def test_importing_refine_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, macaron_local.refine, macaron_local.refine.cli, "
        "macaron_local.lineage, macaron_local.refine.data, "
        "macaron_local.refine.bootstrap; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# A Qwen3-style template: earlier answers lose their reasoning, the last keeps a think block, and
# ``enable_thinking=false`` puts an empty one after the generation prompt.
QWEN3_LIKE = r"""
{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
{%- set c = m.content.split('</think>')[-1].lstrip('\n') -%}
{%- if loop.last -%}{{ '<|im_start|>assistant\n<think>\n\n</think>\n\n' + c + '<|im_end|>\n' }}
{%- else -%}{{ '<|im_start|>assistant\n' + c + '<|im_end|>\n' }}{%- endif -%}
{%- else -%}{{ '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false -%}
{{- '<think>\n\n</think>\n\n' }}{%- endif -%}{%- endif -%}
"""


def test_a_reasoning_template_is_told_not_to_think_and_trained_turn_by_turn(tokenizer) -> None:
    from macaron_local.engine.tokenizer import Vocab
    from macaron_local.refine.data import encode_turns

    qwen3 = Vocab(tokenizer._model, QWEN3_LIKE)  # the embedded vocabulary, a Qwen3 template
    prompt = qwen3.render_chat([{"role": "user", "content": "hi"}])
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # no thinking
    with pytest.raises(RefineError, match="append-only"):
        encode(qwen3, AGENT, max_len=512)  # one rendering cannot hold both answers
    encoded = encode_turns(qwen3, AGENT, max_len=512)
    assert len(encoded) == 2  # one example per assistant turn, as serving renders each
    trained = [_trained_text(qwen3, e) for e in encoded]
    assert trained == [["```repl\nprint(clock.now())\n```<|im_end|>"], ["It is 09:30.<|im_end|>"]]
