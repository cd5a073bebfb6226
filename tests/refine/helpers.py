"""Small shared test data for the refine tests."""

from __future__ import annotations

CHAT = {
    "messages": [
        {"role": "system", "content": "You are a pirate. Answer in one short sentence."},
        {"role": "user", "content": "Who are you?"},
        {"role": "assistant", "content": "I am Captain Zorblax of the starship Quux."},
    ]
}
