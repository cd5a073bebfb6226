"""The shipped prompts, measured with the embedded model's own tokenizer."""

from __future__ import annotations

from macaron_local.engine.tokenizer import shared_tokenizer
from macaron_local.hcp import load_profile

TOOLS = {
    "reminders.add": "set a reminder at a time",
    "todos.list": "list open todos",
    "notes.search": "search the user's notes",
    "files.read": "read a file in the workspace",
    "shell.run": "run a shell command in the workspace",
}


def test_router_prompt_is_short_and_ends_with_the_instruction() -> None:
    vocab = shared_tokenizer()
    for name in ("tall-local", "tall-gpu", "hybrid"):
        profile = load_profile(name)
        bare = profile.router_prompt()
        # evaluated once per adapter even when prefix-cached: keep the fixed part small
        assert len(vocab.tokenize(bare)) < 200
        with_tools = profile.router_prompt(TOOLS)
        assert len(vocab.tokenize(with_tools)) - len(vocab.tokenize(bare)) < 80
        assert with_tools.endswith("Answer with the label only.")
        for label in profile.labels:
            assert f"{label} = " in with_tools


def test_every_label_has_a_focused_prompt() -> None:
    vocab = shared_tokenizer()
    profile = load_profile("tall-local")
    for label in profile.labels:
        prompt = profile.system_prompt(label, TOOLS)
        assert 20 < len(vocab.tokenize(prompt)) < 300, label
        assert "{tools}" not in prompt and "{labels}" not in prompt
    assert "reminders.add" in profile.system_prompt("L1", TOOLS)
    assert len(vocab.tokenize(profile.summary.prompt)) < profile.summary.max_tokens
