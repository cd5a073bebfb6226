"""Label-preserving surface augmentation of routing requests.

Owns: small, deterministic rewrites of a request's surface (typos, casing, punctuation,
greeting prefixes, sign-offs, trailing context) driven by a caller-supplied random.Random.
It must not change what is being asked, so nothing here adds a topic word. Stdlib only.
"""

from __future__ import annotations

import random

PREFIXES = (
    "hey, ",
    "hi! ",
    "quick q: ",
    "ok so ",
    "um, ",
    "pls ",
    "yo ",
    "question: ",
    "hello, ",
    "sorry to bother you, ",
    "one more thing: ",
    "btw ",
    "hey macaron, ",
    "so ",
    "right, ",
    "morning! ",
    "ok next: ",
    "another one: ",
    "hmm ",
    "Hi there. ",
    "Good evening. ",
    "can you help? ",
    "need help: ",
    "quick one - ",
    "alright, ",
)
SUFFIXES = (
    " thanks",
    " thx",
    " ty!",
    " please",
    " pls",
    "!!",
    " :)",
    " (no rush)",
    "?",
    " cheers",
    " thank you!",
    " ...",
    " lol",
    " asap",
    " - thanks in advance",
    " :D",
    " 🙏",
    " x",
)
CONTEXT = (
    " (sorry, typing on my phone)",
    " - I'm in a bit of a hurry",
    " (first time using this)",
    ". Thanks a lot, you're a lifesaver",
    " - long day, sorry if this is vague",
    " (asking for myself, not for work)",
    " — thanks!",
)
KEYBOARD = "qwertyuiopasdfghjklzxcvbnm"


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 4 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    op = rng.randrange(4)
    if op == 0:  # swap two neighbours
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if op == 1:  # drop a letter
        return word[:i] + word[i + 1 :]
    if op == 2:  # double a letter
        return word[:i] + word[i] + word[i:]
    return word[:i] + rng.choice(KEYBOARD) + word[i + 1 :]  # fat finger


def typos(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for _ in range(rng.choice((1, 1, 2))):
        j = rng.randrange(len(words))
        words[j] = _typo(words[j], rng)
    return " ".join(words)


def lower(text: str, rng: random.Random) -> str:
    return text.lower()


def strip_punct(text: str, rng: random.Random) -> str:
    return text.rstrip(".?!") if len(text) > 3 else text


def prefix(text: str, rng: random.Random) -> str:
    head = rng.choice(PREFIXES)
    first = (
        text[:1].lower() if head.endswith((", ", ": ", "- ")) and text[1:2].islower() else text[:1]
    )
    return head + first + text[1:]


def suffix(text: str, rng: random.Random) -> str:
    tail = rng.choice(SUFFIXES)
    if text.endswith((".", "?", "!")) and tail in ("?", " ..."):
        tail = " thanks"
    return text + tail


def context(text: str, rng: random.Random) -> str:
    tail = rng.choice(CONTEXT)
    if text.endswith(("?", "!")) and tail.startswith(". "):
        tail = tail[1:]
    return text.rstrip(".") + tail


def shout(text: str, rng: random.Random) -> str:
    return text[:1].upper() + text[1:] if rng.random() < 0.7 else text.upper()


SHORT_OPS = (
    typos,
    typos,
    lower,
    lower,
    strip_punct,
    prefix,
    prefix,
    suffix,
    suffix,
    context,
    shout,
)
LONG_OPS = (prefix, suffix, context)


def augment(text: str, rng: random.Random) -> str:
    """One random variant of a request: 1-3 surface operations; long inputs get only framing."""
    is_long = "\n" in text or len(text) > 200
    ops = LONG_OPS if is_long else SHORT_OPS
    out = text
    for op in rng.sample(ops, k=rng.choice((1, 2, 2, 3)) if not is_long else 1):
        out = op(out, rng)
    return out
