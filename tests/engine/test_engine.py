"""The MoL engine on the real embedded model: adapters, KV slots, sampling, streaming."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from macaron_local.engine import BACKGROUND, Engine, EngineConfig
from macaron_local.errors import (
    CancelledError,
    ContextOverflowError,
    GrammarError,
    UnknownAdapterError,
)

from .conftest import chat


def test_zero_b_adapter_gives_identical_logits(engine: Engine) -> None:
    tokens = engine.tokenize(chat(engine, "Name three fruits."))
    base = engine.eval_logits(tokens)
    zero = engine.eval_logits(tokens, adapter="zero")
    assert np.array_equal(base, zero)


def test_nonzero_adapter_changes_logits(engine: Engine) -> None:
    tokens = engine.tokenize(chat(engine, "Name three fruits."))
    base = engine.eval_logits(tokens)
    a = engine.eval_logits(tokens, adapter="a")
    assert float(np.max(np.abs(base - a))) > 0.05


def test_all_position_logits_match_last_row(engine: Engine) -> None:
    tokens = engine.tokenize("The quick brown fox")
    rows = engine.eval_logits(tokens, all_positions=True)
    assert rows.shape == (len(tokens), engine.vocab.n_vocab)
    assert int(np.argmax(rows[-1])) == int(np.argmax(engine.eval_logits(tokens)))


def test_switching_a_b_a_is_bit_identical_to_never_switching(engine: Engine) -> None:
    p1 = chat(engine, "Tell me a fact about the sea.")
    first = engine.complete(p1, adapter="a", slot="t:a", max_tokens=24)
    p2 = chat(engine, "Tell me a fact about the sea.", first.text, "And one about rivers?")
    engine.complete(chat(engine, "What is 2 + 2?"), adapter="b", slot="t:b", max_tokens=24)
    switched = engine.complete(p2, adapter="a", slot="t:a", max_tokens=24)
    assert switched.n_reused > 0  # the slot kept its prefix across the switch

    with Engine(engine.info.path, EngineConfig(n_ctx=2048)) as alone:
        alone.load_adapter("a", engine.adapters["a"].path)
        again = alone.complete(p1, adapter="a", slot="t:a", max_tokens=24)
        never = alone.complete(p2, adapter="a", slot="t:a", max_tokens=24)
    assert again.tokens == first.tokens
    assert never.tokens == switched.tokens


def test_interleaved_conversations_keep_independent_kv(engine: Engine) -> None:
    """Two adapters' conversations interleaved turn by turn see exactly their own prefix.

    Each turn's next-token logits must match a run of that conversation alone to float
    rounding (cells sit elsewhere in the shared KV pool, so sums may round differently), while
    a prefix from the other adapter would move them by far more than the tolerance.
    """
    script = ["Hi, who are you?", "I am a helper.", "What colour is the sky?", "Blue.", "Bye."]
    turns = [script[: i + 1] for i in range(0, len(script), 2)]

    def first_logits(name: str, slot: str, history: list[str]) -> np.ndarray:
        done = engine.complete(
            chat(engine, *history), adapter=name, slot=slot, max_tokens=1, capture_logits=True
        )
        assert done.n_reused > 0 or history is turns[0]
        return done.step_logits[0]

    mixed = {n: [] for n in ("a", "b")}
    for history in turns:
        for name in ("a", "b"):
            mixed[name].append(first_logits(name, f"mix:{name}", history))
    assert engine.slots()["mix:a"][0] == "a" and engine.slots()["mix:b"][0] == "b"
    solo = {n: [first_logits(n, f"solo:{n}", h) for h in turns] for n in ("a", "b")}
    for name in ("a", "b"):
        for got, want in zip(mixed[name], solo[name], strict=True):
            assert float(np.max(np.abs(got - want))) < 1e-3
    pairs = zip(solo["a"], solo["b"], strict=True)
    adapters_differ = max(float(np.max(np.abs(x - y))) for x, y in pairs)
    assert adapters_differ > 0.05


def test_slot_reused_under_another_adapter_is_wiped(engine: Engine) -> None:
    prompt = chat(engine, "Explain rain in one sentence.")
    engine.complete(prompt, adapter="a", slot="shared", max_tokens=4)
    done = engine.complete(prompt, adapter="b", slot="shared", max_tokens=4)
    assert done.n_reused == 0
    assert engine.slots()["shared"][0] == "b"


def test_prefix_reuse_evaluates_only_new_tokens(engine: Engine) -> None:
    p1 = chat(engine, "Give me a word that rhymes with cat.")
    first = engine.complete(p1, slot="reuse", max_tokens=8)
    p2 = chat(engine, "Give me a word that rhymes with cat.", first.text, "And with dog?")
    second = engine.complete(p2, slot="reuse", max_tokens=8)
    assert second.n_reused >= len(engine.tokenize(p1))
    assert second.n_evaluated == second.n_prompt - second.n_reused


def test_streaming_pieces_concatenate_to_text(engine: Engine) -> None:
    stream = engine.generate(chat(engine, "Count from one to five."), max_tokens=24)
    pieces = list(stream)
    done = stream.result()
    assert "".join(pieces) == done.text and len(pieces) > 1
    assert done.finish_reason in {"eog", "length"}


def test_stop_string_cuts_and_is_not_streamed(engine: Engine) -> None:
    prompt = chat(engine, "Count from one to ten, separated by commas.")
    full = engine.complete(prompt, max_tokens=40)
    assert len(full.text) > 12
    stop = full.text[8:11]  # a stop string that starts mid-stream, possibly mid-token
    stream = engine.generate(prompt, max_tokens=40, stop=[stop])
    streamed = "".join(stream)
    done = stream.result()
    assert done.finish_reason == "stop" and stop not in streamed
    assert streamed == done.text == full.text[: full.text.index(stop)]


def test_grammar_forces_a_label(engine: Engine) -> None:
    grammar = 'root ::= "L0" | "L1" | "L2" | "L3"'
    for q in ("Write a python function", "Remind me at 5pm", "Hello!"):
        done = engine.complete(chat(engine, q), grammar=grammar, max_tokens=24)
        assert done.text in {"L0", "L1", "L2", "L3"}


def test_invalid_grammar_raises_before_running(engine: Engine) -> None:
    with pytest.raises(GrammarError):
        engine.generate("hi", grammar='root ::= "unterminated', max_tokens=4)
    assert engine.complete("hi", max_tokens=2).n_prompt > 0  # still alive


def test_each_grammar_is_checked_once_per_engine(engine: Engine, monkeypatch) -> None:
    """Building llama.cpp's grammar sampler to validate costs up to ~100 ms for the GenUI
    grammar; the router's and the UI's grammars are the same turn after turn."""
    import macaron_local.engine.engine as engine_module

    calls: list[str] = []
    real = engine_module.validate_gbnf

    def counting(gbnf: str, **kw: object) -> None:
        calls.append(gbnf)
        real(gbnf, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine_module, "validate_gbnf", counting)
    grammar = 'root ::= "yes" | "no" | "maybe"'
    for _ in range(3):
        engine.check_grammar(grammar)
    assert calls == [grammar]
    bad = 'root ::= "open'
    for _ in range(2):  # a rejected grammar is not remembered as good
        with pytest.raises(GrammarError):
            engine.check_grammar(bad)
    assert calls == [grammar, bad, bad]


def test_cancel_between_tokens(engine: Engine) -> None:
    stream = engine.generate(chat(engine, "Write a long story about a dragon."), max_tokens=200)
    pieces = []
    with pytest.raises(CancelledError):
        for piece in stream:
            pieces.append(piece)
            if len(pieces) == 3:
                stream.cancel()
    assert 3 <= len(pieces) < 200
    assert engine.complete("Hello", max_tokens=2).n_generated >= 1


def test_context_overflow_raises_instead_of_truncating(engine: Engine) -> None:
    long_text = "word " * 3000
    with pytest.raises(ContextOverflowError) as err:
        engine.generate(long_text, max_tokens=16)
    assert err.value.limit == engine.n_ctx and err.value.n_tokens > engine.n_ctx


def test_unknown_adapter_is_named(engine: Engine) -> None:
    with pytest.raises(UnknownAdapterError, match="nope"):
        engine.generate("hi", adapter="nope")


def test_interactive_request_preempts_background(engine: Engine) -> None:
    long_prompt = chat(engine, "Describe a city at night in detail.")
    short_prompt = chat(engine, "Say yes.")
    alone_long = engine.complete(long_prompt, slot="bg-ref", max_tokens=60)
    alone_short = engine.complete(short_prompt, adapter="a", slot="fg-ref", max_tokens=8)

    order: list[str] = []
    started = threading.Event()
    bg = engine.generate(
        long_prompt,
        slot="bg",
        max_tokens=60,
        priority=BACKGROUND,
        on_token=lambda _t: started.set(),
    )
    assert started.wait(60)
    fg = engine.generate(short_prompt, adapter="a", slot="fg", max_tokens=8)
    threading.Thread(target=lambda: (fg.result(), order.append("fg"))).start()
    bg_done = bg.result()
    order.append("bg")
    fg_done = fg.result()
    assert order[0] == "fg"
    assert bg_done.tokens == alone_long.tokens and fg_done.tokens == alone_short.tokens


def test_requests_from_many_threads_are_serialised(engine: Engine) -> None:
    prompt = chat(engine, "Name a colour.")
    engine.complete(prompt, slot="mt", max_tokens=6)  # later calls all reuse this prefix
    ref = engine.complete(prompt, slot="mt", max_tokens=6).tokens
    results: list[list[int]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(engine.complete(prompt, slot="mt", max_tokens=6).tokens)
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [ref] * 4


def test_parked_slots_beyond_the_budget_are_dropped_then_rebuilt(model_path) -> None:
    with Engine(model_path, EngineConfig(n_ctx=1024, snapshot_mb=0)) as eng:
        p1 = chat(eng, "What is a cloud?")
        first = eng.complete(p1, slot="one", max_tokens=8)
        eng.complete(chat(eng, "What is a river?"), slot="two", max_tokens=8)  # parks "one"
        assert eng.parked_bytes() == 0  # over the 0 MB budget: dropped
        again = eng.complete(p1, slot="one", max_tokens=8)
        assert again.n_reused == 0 and again.tokens == first.tokens
    with Engine(model_path, EngineConfig(n_ctx=1024)) as eng:
        eng.complete(p1, slot="one", max_tokens=8)
        eng.complete(chat(eng, "What is a river?"), slot="two", max_tokens=8)
        assert eng.parked_bytes() > 0
        assert eng.complete(p1, slot="one", max_tokens=8).n_reused == len(eng.tokenize(p1)) - 1


def test_a_background_prompt_keeps_what_a_request_read_meanwhile(engine: Engine) -> None:
    """The router's warm-up is a background prompt in the route slot; a route request that
    arrives half way reads the rest of that prompt and its own tokens. The warm-up, resumed,
    goes on from there: it used to cut the slot back to its own half-read point, and the next
    route read the router prompt again (1-1.5 s per turn on 2 cores)."""
    prefix = chat(engine, "Classify this. " + "The river rises every spring. " * 60)
    n = len(engine.tokenize(prefix))
    bg = engine.generate(prefix, slot="warm-up", max_tokens=1, priority=BACKGROUND)
    held = 0
    while not bg.done and not 0 < held < n // 2:  # wait until it is part read
        held = engine.slots().get("warm-up", (None, 0))[1]
    assert 0 < held < n // 2, "the background prompt finished before it could be overtaken"
    ahead = engine.complete(prefix + "Next:", slot="warm-up", max_tokens=1)
    done = bg.result()
    assert ahead.n_reused >= held  # the request went on from the warm-up's part...
    assert done.n_evaluated < n - held  # ...and the warm-up did not read that part again


def test_a_background_prompt_yields_between_chunks(engine: Engine) -> None:
    """A long background prompt is read BACKGROUND_CHUNK tokens at a time with the engine free
    in between: other calls run while it is half read, and its result is the same as in one
    piece."""
    from macaron_local.engine.engine import BACKGROUND_CHUNK

    long_prompt = chat(engine, "Summarise this. " + "The river rises every spring. " * 60)
    n = len(engine.tokenize(long_prompt))
    assert n > 4 * BACKGROUND_CHUNK
    whole = engine.complete(long_prompt, slot="whole", max_tokens=4)
    bg = engine.generate(long_prompt, slot="chunks", max_tokens=4, priority=BACKGROUND)
    seen: set[int] = set()
    while not bg.done:  # each call is served at the next chunk boundary
        held = engine.slots().get("chunks", (None, 0))[1]
        seen.add(held)
    done = bg.result()
    assert {h for h in seen if 0 < h < n}, f"never saw the prompt half read: {sorted(seen)}"
    assert done.tokens == whole.tokens
    assert done.n_evaluated == n and done.n_reused == 0


def test_ban_first_forbids_only_the_first_token(engine: Engine) -> None:
    prompt = chat(engine, "Name three fruits.")
    free = engine.complete(prompt, slot="ban", max_tokens=6)
    banned = engine.complete(prompt, slot="ban", max_tokens=6, ban_first=[free.tokens[0]])
    assert banned.tokens[0] != free.tokens[0]
    # later positions are not constrained: banning the second token changes nothing
    assert free.tokens[1] != free.tokens[0]
    again = engine.complete(prompt, slot="ban", max_tokens=6, ban_first=[free.tokens[1]])
    assert again.tokens == free.tokens


CLOSE_MID_BACKGROUND = """
import sys, time
from macaron_local.engine import BACKGROUND, Engine, EngineConfig
eng = Engine(sys.argv[1], EngineConfig(n_ctx=1024))
for _ in range(5):  # a warm-up and the job queued behind it, both cut off by close()
    prompt = "Route this. " + "The river rises every spring. " * 60
    bg = eng.prefill(prompt, slot="router", cache_dir=None)
    queued = eng.generate(prompt + " Again.", slot="other", max_tokens=4, priority=BACKGROUND)
    while not 0 < eng.slots().get("router", (None, 0))[1]:
        pass
    eng.close()
    for stream in (bg, queued):
        assert stream.done
    eng = Engine(sys.argv[1], EngineConfig(n_ctx=1024))
eng.close()
print("ok")
"""


def test_closing_while_background_work_is_queued_does_not_crash(model_path) -> None:
    """close() used to free llama.cpp from an interactive job while a parked background job
    (the router's warm-up) was still queued; the worker then resumed it on the freed context
    and the process died with SIGSEGV (``macaron route --file bad.jsonl`` exits at once).
    Now queued jobs are dropped and cancelled first, and the free is the worker's last act.
    In a subprocess: a segfault must fail this test, not kill the test run."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CLOSE_MID_BACKGROUND, str(model_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_tokenizing_while_the_engine_closes_is_an_error_not_a_crash(model_path) -> None:
    """Callers tokenize on their own threads; close() frees the vocabulary on the worker thread.
    A turn still counting tokens while the app quits used to segfault the process."""
    from macaron_local.errors import EngineError

    eng = Engine(model_path, EngineConfig(n_ctx=512))
    errors: list[BaseException] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            try:
                eng.tokenize("a turn still counting its tokens " * 20)
            except EngineError as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    eng.close()
    stop.set()
    for t in threads:
        t.join(10)
    with pytest.raises(EngineError, match="closed"):
        eng.tokenize("hello")
    assert all("closed" in str(e) for e in errors)


def test_prefill_saves_the_prefix_and_a_later_start_restores_it(engine: Engine, tmp_path) -> None:
    """The router's fixed prompt is read once per machine, not once per start: the first
    prefill reads it in the background and saves it; the next restores it, and a request on
    that slot then reads only its own tokens and answers exactly as from a fresh read."""
    prefix = chat(engine, "Route this. " + "Labels are chat, agent, code and interface. " * 20)
    n = len(engine.tokenize(prefix))
    cache = tmp_path / "kv"
    fresh = engine.complete(prefix + "Request: hello", slot="fresh", adapter="a", max_tokens=6)
    stream = engine.prefill(prefix, adapter="a", slot="router", cache_dir=cache)
    assert stream is not None and stream.result().n_evaluated == n
    engine.slots()  # the save job queued behind the read has run
    assert len(list(cache.glob("*.kv"))) == 1
    engine.reset()  # a new start: no slot holds anything
    assert engine.prefill(prefix, adapter="a", slot="router", cache_dir=cache) is None
    assert engine.slots()["router"] == ("a", n)
    again = engine.complete(prefix + "Request: hello", slot="router", adapter="a", max_tokens=6)
    whole, head = engine.tokenize(prefix + "Request: hello"), engine.tokenize(prefix)
    shared = 0
    while shared < n and whole[shared] == head[shared]:
        shared += 1
    assert again.n_reused == shared  # only the request's own tokens were read
    assert again.tokens == fresh.tokens
    # another adapter (or another prompt) has its own file: nothing is restored across them
    assert engine.prefill(prefix, adapter="b", slot="router-b", cache_dir=cache) is not None


def test_a_corrupt_saved_prefix_is_ignored_and_replaced(engine: Engine, tmp_path, caplog) -> None:
    prefix = chat(engine, "Route this. " + "Short prompt for the cache. " * 10)
    cache = tmp_path / "kv"
    engine.prefill(prefix, slot="c", cache_dir=cache).result()  # type: ignore[union-attr]
    engine.slots()
    (path,) = cache.glob("*.kv")
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF  # one flipped bit of KV would route wrongly forever: the checksum catches it
    path.write_bytes(bytes(data))
    engine.reset()
    with caplog.at_level("WARNING"):
        stream = engine.prefill(prefix, slot="c", cache_dir=cache)
    assert stream is not None, "a corrupt file must not be restored"
    assert "checksum mismatch" in caplog.text
    stream.result()
    engine.slots()
    engine.reset()
    assert engine.prefill(prefix, slot="c", cache_dir=cache) is None  # rewritten, good again


def test_a_saved_prefix_in_a_read_only_cache_still_restores(tmp_path, monkeypatch) -> None:
    """Reading marks the file most recently used (the folder keeps the 8 newest); when the
    cache cannot be touched the file is still read, not thrown away."""
    from macaron_local.engine import prefix_cache

    path = tmp_path / "kv" / "p.kv"
    prefix_cache.write(path, [1, 2, 3], b"state bytes")

    def refuse(*_: object, **__: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(prefix_cache.os, "utime", refuse)
    assert prefix_cache.read(path) == ([1, 2, 3], b"state bytes")


def test_a_route_runs_between_the_tokens_of_a_running_answer(engine: Engine) -> None:
    """Under concurrency a route waited behind whole answers (3.2 s at 4 clients): a ROUTE
    request is served at the answer's next token, and the answer then goes on unharmed."""
    from macaron_local.engine import ROUTE

    long = 'root ::= ("la "){120}'  # an answer that cannot end early
    prompt = chat(engine, "Sing.")
    alone = engine.complete(prompt, slot="song", max_tokens=200, grammar=long)
    answer = engine.generate(prompt, slot="song2", max_tokens=200, grammar=long)
    pieces = iter(answer)
    next(pieces)  # it is running
    routed = engine.complete(chat(engine, "Pick one."), slot="route", max_tokens=1, priority=ROUTE)
    assert routed.tokens and not answer.done  # served while the answer was still going
    assert "".join(pieces) and answer.result().tokens == alone.tokens


def test_an_answer_cancelled_during_its_prompt_stops_at_the_next_chunk(model_path) -> None:
    """An interactive prompt is fed in ``n_batch`` chunks with a yield between them, so a
    cancel (Esc, a closing app) or a route waits for one chunk, not the whole prompt (quitting
    right after a turn waited 4-5 s for a summary's whole prompt)."""
    with Engine(model_path, EngineConfig(n_ctx=2048, n_batch=64)) as eng:
        prompt = chat(eng, "Summarize this: " + "the tide came in and went out again. " * 120)
        n_prompt = len(eng.tokenize(prompt))
        assert n_prompt > 10 * 64
        cancel = threading.Event()
        cancel.set()  # before it starts: the first chunk is fed, then it stops
        stream = eng.generate(prompt, slot="long", max_tokens=8, cancel=cancel)
        with pytest.raises(CancelledError):
            stream.result()
        again = eng.complete(prompt, slot="long", max_tokens=4)  # the slot kept that chunk
        assert again.n_reused == 64 and again.n_evaluated == n_prompt - 64 and again.tokens


def _three_conversations(eng: Engine, adapter_dir) -> list[tuple[int, int, list[int]]]:
    """Two rounds of three adapters' conversations, interleaved: (reused, evaluated, tokens)."""
    for name in ("zero", "a", "b"):
        eng.load_adapter(name, adapter_dir / f"{name}.gguf")
    out, firsts = [], {}
    for name in ("zero", "a", "b"):
        done = eng.complete(chat(eng, f"Say hi as {name}."), adapter=name, slot=name, max_tokens=8)
        firsts[name] = done.text
        out.append((done.n_reused, done.n_evaluated, done.tokens))
    for name in ("zero", "a", "b"):
        again = chat(eng, f"Say hi as {name}.", firsts[name], "Now say bye.")
        done = eng.complete(again, adapter=name, slot=name, max_tokens=8)
        out.append((done.n_reused, done.n_evaluated, done.tokens))
    return out


def test_resident_slots_switch_without_parking_and_answer_as_one_sequence(
    model_path, adapter_dir
) -> None:
    """Resident placement (``resident_slots``, the design for a KV on a GPU): three adapters'
    slots keep a sequence each; switching between them parks nothing, reuses each prefix, and
    gives exactly the tokens of the one-sequence engine that parks at every switch."""
    with Engine(model_path, EngineConfig(n_ctx=1024, resident_slots=3)) as eng:
        assert eng.n_ctx == 1024  # per sequence: the context holds 3 x 1024 cells
        seated = _three_conversations(eng, adapter_dir)
        assert eng.parked_bytes() == 0  # no slot was ever copied to the host
        done = eng.complete(chat(eng, "Say hi as a."), adapter="b", slot="a", max_tokens=4)
        assert done.n_reused == 0  # slot "a" asked for under another adapter starts afresh
    with Engine(model_path, EngineConfig(n_ctx=1024)) as eng:
        parked = _three_conversations(eng, adapter_dir)
        assert eng.parked_bytes() > 0
    assert [t for _, _, t in seated] == [t for _, _, t in parked]
    assert [r for r, _, _ in seated] == [r for r, _, _ in parked]
    assert all(r > 0 for r, _, _ in seated[3:])  # the second round reused each prefix
