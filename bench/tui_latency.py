"""Keystroke-to-screen latency while a turn streams, and app start to ready time.

    python bench/tui_latency.py [--real] [--keys 60]

Runs the app headless (Textual's Pilot) over the scripted assistant, or over the real embedded
model with ``--real`` (a fast test profile in a temporary MACARON_HOME). While an answer streams
it sends keys one by one to the input and times each from the key event to the first screen
refresh after the input holds the character. Prints median and p95 in milliseconds, plus the
time from ``run_test`` entering to the chat being shown, and to the model being ready.
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

from textual import events  # noqa: E402

from macaron_local.tui.app import make_app  # noqa: E402
from macaron_local.tui.settings import Settings  # noqa: E402
from macaron_local.tui.widgets.prompt import PromptInput  # noqa: E402


def _assistant(real: bool):  # noqa: ANN202
    if not real:
        from tests.tui.scripted import ScriptedAssistant

        return ScriptedAssistant(piece_delay=0.02)
    from macaron_local.facade import Assistant
    from tests.turns.conftest import write_fast_profile

    home = Path(tempfile.mkdtemp(prefix="tui-bench-"))
    os.environ["MACARON_HOME"] = str(home)
    write_fast_profile(home, extra="\n[sampling.overrides.L0]\nmax_tokens = 400\n")
    return Assistant("test-fast")


async def _keystroke(app, prompt: PromptInput, char: str) -> float:  # noqa: ANN001
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


async def run(real: bool, n_keys: int) -> dict[str, float]:
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
        # the scripted answer echoes the request: 400 words stream for about 8 s
        story = " ".join(["waves"] * 400) if not real else "a very long story about the sea"
        prompt.load_text(f"/chat tell me {story}")
        await pilot.press("enter")
        while (
            not app.chat.query("AssistantMessage")
            or not app.chat.query("AssistantMessage").last().text
        ):
            await asyncio.sleep(0.01)  # the answer is streaming now
        samples = []
        for i in range(n_keys):
            if app.chat.job is None:
                break
            samples.append(await _keystroke(app, prompt, "abcdefghij"[i % 10]))
            await asyncio.sleep(0.05)  # a typist, not a flood
        streaming = app.chat.job is not None
        if app.chat.job is not None:
            app.chat.job.cancel.set()
        while app.chat.job is not None:
            await asyncio.sleep(0.05)
    assistant.close()
    samples.sort()
    return {
        "start_to_chat_s": shown,
        "start_to_ready_s": ready,
        "keys": len(samples),
        "median_ms": statistics.median(samples) if samples else float("nan"),
        "p95_ms": samples[int(0.95 * (len(samples) - 1))] if samples else float("nan"),
        "still_streaming_at_end": float(streaming),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", action="store_true", help="use the real embedded model")
    parser.add_argument("--keys", type=int, default=60)
    args = parser.parse_args()
    result = asyncio.run(run(args.real, args.keys))
    print(("real" if args.real else "scripted"), {k: round(v, 2) for k, v in result.items()})


if __name__ == "__main__":
    main()
