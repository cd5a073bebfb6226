"""GenUI gallery: parse and render every entry, component tokens vs HTML, first-render time.

    python bench/genui.py [--rate TOK_PER_S] [--json OUT]

For each request in ``bench/genui_gallery/gallery.jsonl`` (hand-written answers; the model's
once the L3 adapter serves them): the answer parses (a ui document of the expected kind, or
plain text), and renders in a headless Textual app (``run_test``). Then:

- **output tokens**: the answer tokenized with the embedded tokenizer vs an equivalent HTML page
  (``equivalent_html``: the same controls, labels, values and charts written as plain semantic
  HTML with one short style block and the few lines of script a live page needs to send its
  values, sort or filter; a mechanical transcription in the style a person writes by hand);
- **time to first rendered component**: the answer's tokens replayed at the model's decode rate
  (measured on the embedded model unless ``--rate`` is given) through the streaming parser, so
  the first component mounts when its JSON closes, plus its measured mount time; vs rendering
  after the whole document (all tokens, then mounting the whole document).

Prints one line per entry and the ratios. Run it under ``nice -n 19`` on shared machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.genui_gallery.equivalent_html import equivalent_html
from macaron_local.engine.tokenizer import shared_tokenizer
from macaron_local.genui.catalogue import Document
from macaron_local.genui.stream import ComponentReady, DocumentReady, UiStream, split_answer

GALLERY = Path(__file__).resolve().parent / "genui_gallery" / "gallery.jsonl"


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GALLERY.open(encoding="utf-8") if line.strip()]


def measure_rate(n: int = 96) -> float:
    """Decode tokens/s of the embedded model (greedy, after the first token)."""
    from macaron_local.engine import Engine, EngineConfig
    from macaron_local.manifests import embedded_model_file

    with Engine(embedded_model_file(), EngineConfig(n_ctx=1024)) as engine:
        prompt = engine.render_chat([{"role": "user", "content": "Describe a tip calculator."}])
        engine.complete(prompt, max_tokens=8)  # warm up
        done = engine.complete(prompt + " ", max_tokens=n)
    return (done.n_generated - 1) / max(done.total_s - done.ttft_s, 1e-6)


def replay(answer: str) -> tuple[int, int | None, int | None]:
    """(tokens, index of the token that completes the first component, ... the document)."""
    tok = shared_tokenizer()
    ids = tok.tokenize(answer, add_special=False, parse_special=False)
    parser, seen = UiStream(), ""
    first = whole = None
    for i in range(len(ids)):
        text = tok.detokenize(ids[: i + 1])
        for ev in parser.feed(text[len(seen) :]):
            if isinstance(ev, ComponentReady) and first is None:
                first = i
            if isinstance(ev, DocumentReady):
                whole = i
        seen = text
    return len(ids), first, whole


async def render_times(docs: list[Document]) -> list[tuple[float, float, bool]]:
    """Per document: ms to mount the first component alone, ms to mount the whole document,
    and whether the rendered state equals the document's initial state."""
    from textual.app import App

    from macaron_local.tui.widgets.genui import GenUIView

    app: App[None] = App()
    out: list[tuple[float, float, bool]] = []
    async with app.run_test(size=(120, 60)) as pilot:
        for doc in docs:
            view = GenUIView(title=doc.title)
            await app.mount(view)
            await pilot.pause()
            t0 = time.perf_counter()
            await view.add_component(doc.components[0])
            await pilot.pause()
            first_ms = (time.perf_counter() - t0) * 1000
            await view.remove()
            t0 = time.perf_counter()
            whole = GenUIView(doc)
            await app.mount(whole)
            await pilot.pause()
            whole_ms = (time.perf_counter() - t0) * 1000
            ok = whole.read_state() == doc.initial_state()
            await whole.remove()
            out.append((first_ms, whole_ms, ok))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=float, default=None, help="decode tok/s (default: measure)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = ap.parse_args()
    entries = load()
    rate = args.rate or measure_rate()
    tok = shared_tokenizer()
    rows, failures = [], []
    ui = []
    for e in entries:
        ans = split_answer(e["answer"])
        kinds = {c.type for c in ans.document.walk()} if ans.document else set()
        if (ans.document is None) != (e["kind"] == "plain") or not set(e["expect"]) <= kinds:
            failures.append(e["request"])
        if ans.document is not None:
            ui.append((e, ans.document))
    renders = asyncio.run(render_times([d for _, d in ui]))
    for (e, doc), (first_ms, whole_ms, ok) in zip(ui, renders, strict=True):
        n, first, whole = replay(e["answer"])
        n_html = len(tok.tokenize(equivalent_html(doc), add_special=False, parse_special=False))
        if first is None or whole is None or not ok:
            failures.append(e["request"])
            continue
        t_prog = (first + 1) / rate * 1000 + first_ms
        t_whole = (whole + 1) / rate * 1000 + whole_ms
        rows.append(
            {
                "request": e["request"],
                "kind": e["kind"],
                "ui_tokens": n,
                "html_tokens": n_html,
                "first_ms": round(t_prog, 1),
                "whole_ms": round(t_whole, 1),
                "speedup": round(t_whole / t_prog, 2),
            }
        )
        print(
            f"{e['kind']:<10} {n:5d} tok vs {n_html:5d} html  first {t_prog:7.0f} ms  "
            f"whole {t_whole:7.0f} ms  x{t_whole / t_prog:4.1f}  {e['request'][:48]}"
        )
    ui_tok = sum(r["ui_tokens"] for r in rows)
    html_tok = sum(r["html_tokens"] for r in rows)
    speed = [r["speedup"] for r in rows]
    summary = {
        "entries": len(entries),
        "ui_entries": len(ui),
        "plain_entries": len(entries) - len(ui),
        "failures": failures,
        "decode_tok_s": round(rate, 1),
        "ui_tokens_mean": round(ui_tok / len(rows), 1),
        "html_tokens_mean": round(html_tok / len(rows), 1),
        "html_over_ui": round(html_tok / ui_tok, 2),
        "first_render_speedup_median": statistics.median(speed),
        "first_render_speedup_max": max(speed),
    }
    print(
        f"\n{len(entries)} requests ({len(ui)} UI, {len(entries) - len(ui)} plain), "
        f"{len(failures)} failed; decode rate {rate:.1f} tok/s"
    )
    print(
        f"output tokens: components {summary['ui_tokens_mean']} vs HTML "
        f"{summary['html_tokens_mean']} per answer (HTML/components = "
        f"{summary['html_over_ui']}x; the report: 1,224 vs 672 = 1.82x)"
    )
    print(
        f"first rendered component: median {summary['first_render_speedup_median']}x, up to "
        f"{summary['first_render_speedup_max']}x sooner progressively (the report: up to 6x)"
    )
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    if failures:
        raise SystemExit(f"failed: {failures}")


if __name__ == "__main__":
    main()
