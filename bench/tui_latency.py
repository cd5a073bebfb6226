"""Keystroke echo while an answer streams vs idle (same run), and quitting right after a turn.

    python bench/tui_latency.py [--real] [--keys 60] [--gap 0.05]

Runs the app headless (Textual's Pilot) over the scripted assistant, or over the real embedded
model with ``--real`` (a fast test profile in a temporary MACARON_HOME). Each key is sent to the
input and timed from the key event to the first screen refresh after the input holds it:
``--keys`` keys with nothing running (idle), then as many while a long answer streams, one every
``--gap`` seconds (50 ms: a very fast typist),
``--rounds`` times in turn so load drift on a shared machine hits both. Prints
median and p95 of both and the p95 ratio streaming/idle (target <= 1.5). Then, right after the
last answer is committed, it quits the way ``macaron`` does (the app exits, then
``close(finish_summaries=False)``: the summary is left to the next start) and prints how long
that took (target < 1 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events

from macaron_local.tui.app import make_app
from macaron_local.tui.settings import Settings
from macaron_local.tui.widgets.prompt import PromptInput

GAP_S = 0.05  # between keys


def _assistant(real: bool):
    if not real:
        from tests.tui.scripted import ScriptedAssistant

        return ScriptedAssistant(piece_delay=0.02)
    from macaron_local.experience.settings import set_user_choice
    from macaron_local.facade import Assistant
    from tests.turns.conftest import write_fast_profile

    home = Path(tempfile.mkdtemp(prefix="tui-bench-"))
    os.environ["MACARON_HOME"] = str(home)
    write_fast_profile(home, extra="\n[sampling.overrides.L0]\nmax_tokens = 400\n")
    set_user_choice(False)  # no first-run notice
    return Assistant("test-fast")


async def _keystroke(app, prompt: PromptInput, char: str) -> float:
    """ms from posting a key to the first screen refresh after the input holds it."""
    loop = asyncio.get_running_loop()
    before = len(prompt.text)
    start = time.perf_counter()
    prompt.post_message(events.Key(char, char))
    while len(prompt.text) == before:
        await asyncio.sleep(0)
    refreshed: asyncio.Future[float] = loop.create_future()
    app.call_after_refresh(lambda: refreshed.set_result(time.perf_counter()))
    return (await refreshed - start) * 1000


async def _type(app, prompt: PromptInput, n: int, while_streaming: bool) -> list[float]:
    samples = []
    for i in range(n):
        if while_streaming and app.chat.job is None:
            break
        samples.append(await _keystroke(app, prompt, "abcdefghij"[i % 10]))
        await asyncio.sleep(GAP_S)
    return samples


def _stats(samples: list[float]) -> tuple[float, float]:
    if not samples:
        return float("nan"), float("nan")
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


async def _stream_and_type(app, pilot, prompt: PromptInput, n_keys: int, real: bool) -> list[float]:
    """Send a long request, type while its answer streams, wait for the turn to end."""
    # the scripted answer echoes the request: 400 words stream for about 8 s
    story = " ".join(["waves"] * 400) if not real else "a very long story about the sea"
    prompt.load_text(f"/chat tell me {story}")
    n_answers = len(app.chat.query("AssistantMessage"))
    await pilot.press("enter")
    while len(app.chat.query("AssistantMessage")) == n_answers or not (
        app.chat.query("AssistantMessage").last().text
    ):
        await asyncio.sleep(0.01)  # the answer is streaming now
    samples = await _type(app, prompt, n_keys, while_streaming=True)
    while app.chat.job is not None:  # the turn ends and is committed
        await asyncio.sleep(0.01)
    return samples


async def run(real: bool, n_keys: int, rounds: int = 2) -> dict[str, float]:
    assistant = _assistant(real)
    app = make_app(Settings(), assistant)
    t0 = time.perf_counter()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        shown = time.perf_counter() - t0
        while not assistant.ready:
            await asyncio.sleep(0.05)
        ready = time.perf_counter() - t0
        prompt = app.chat.query_one(PromptInput)
        idle: list[float] = []
        streaming: list[float] = []
        for _ in range(rounds):  # idle and streaming alternate: load drift hits both alike
            prompt.load_text("")
            idle += await _type(app, prompt, n_keys, while_streaming=False)
            streaming += await _stream_and_type(app, pilot, prompt, n_keys, real)
        quit_from = time.perf_counter()
        app.exit()
    assistant.close(finish_summaries=False)  # what tui/run.py does after app.run()
    quit_s = time.perf_counter() - quit_from
    (idle_med, idle_p95), (str_med, str_p95) = _stats(idle), _stats(streaming)
    return {
        "start_to_chat_s": shown,
        "start_to_ready_s": ready,
        "idle_keys": len(idle),
        "idle_median_ms": idle_med,
        "idle_p95_ms": idle_p95,
        "streaming_keys": len(streaming),
        "streaming_median_ms": str_med,
        "streaming_p95_ms": str_p95,
        "p95_ratio": str_p95 / idle_p95,
        "median_ratio": str_med / idle_med,
        "quit_after_turn_s": quit_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", action="store_true", help="use the real embedded model")
    parser.add_argument("--keys", type=int, default=60, help="per phase")
    parser.add_argument("--rounds", type=int, default=2, help="idle + streaming phases")
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between keys")
    args = parser.parse_args()
    global GAP_S
    GAP_S = args.gap
    result = asyncio.run(run(args.real, args.keys, args.rounds))
    print(("real" if args.real else "scripted"), {k: round(v, 2) for k, v in result.items()})


if __name__ == "__main__":
    main()
