"""A long conversation on the real runtime never fails for length, and keeps its KV prefix.

Short budgets make a hundred turns cheap: a 768-token context, 4-token answers and 16-token
summaries, so the view hits the context within a dozen turns and then lives on rolling digests
and, later, on leaving out its oldest turns. Labels are pinned (routing is not under test) and
views wait for every summary (no provisional notes), so the run is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from macaron_local.store import branch
from macaron_local.turns.pipeline import Runtime
from macaron_local.turns.turn import TurnRequest
from tests.conftest import macaron_home
from tests.turns.conftest import captured_views

SHORT = """
schema_version = 1
extends = "tall-local"

[profile]
id = "test-short"
version = "1.0.0"
description = "tall-local with a short context and tiny answers, for long-session tests"

[resources]
n_ctx = 768

[memory]
answer_reserve = 64

[summary]
max_tokens = 16

[sampling.defaults]
temperature = 0.0
max_tokens = 4

[sampling.overrides.L2]
max_tokens = 4
"""
TURNS = 100
LABELS = ("L0", "L2", "L3")
TOPICS = ("the garden", "a trip to Porto", "my tax forms", "a birthday party", "the bike")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def short_runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    home = tmp_path_factory.mktemp("long-home")
    (home / "config" / "profiles").mkdir(parents=True)
    (home / "config" / "profiles" / "test-short.toml").write_text(SHORT)
    with macaron_home(home):
        rt = Runtime.open("test-short", db_path=home / "data" / "macaron.db")
    memory = rt.profile.memory.model_copy(update={"summary_wait_s": None})
    rt.profile = rt.profile.model_copy(update={"memory": memory})
    yield rt
    rt.close()


@pytest.mark.timeout(2400)  # 100 turns: 4 min on an idle machine (200 took 9.7 min in CI)
def test_a_hundred_turns_never_fail_for_length(short_runtime: Runtime) -> None:
    rt = short_runtime
    s = rt.new_session("long")
    prompt = cached = 0
    with captured_views(rt) as views:
        for i in range(TURNS):
            topic = TOPICS[i % len(TOPICS)]
            record = rt.run_turn(  # a TurnError (a view that does not fit) fails the test
                TurnRequest(
                    s.id, f"Turn {i}: one more question about {topic}.", label=LABELS[i % 3]
                )
            )
            if i >= TURNS // 4:  # the view is at the context's limit by now
                prompt += record.tokens["prompt"]
                cached += record.tokens["cached"]
    assert len(branch(rt.db(), s.id)) == TURNS and len(views) == TURNS
    first_digest = next(n for n, v in enumerate(views) if v.folded)
    first_drop = next(n for n, v in enumerate(views) if v.dropped)
    assert first_digest < first_drop
    notes = [m["content"] for m in views[first_digest].messages]
    assert any(note.startswith("[Earlier turns ") for note in notes)
    keep = rt.profile.memory.keep_recent_turns
    for n, view in enumerate(views):  # the latest turns are never folded or left out
        assert view.folded <= max(0, n - keep) and view.dropped <= max(0, n - keep)
    assert views[-1].dropped > 0 and f"{views[-1].dropped} earlier turns" in str(views[-1].messages)
    # the stable start of the view is reused: most of each prompt comes from the slot's KV
    # (56% in the run that set this bound)
    assert cached >= 0.5 * prompt, (cached, prompt)
