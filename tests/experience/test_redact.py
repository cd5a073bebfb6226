"""Redaction: planted secrets and NoAI text never survive; ordinary text is left alone."""

from __future__ import annotations

import pytest

from macaron_local.experience.redact import redact, redact_value

SECRETS = {
    "openai": "sk-proj-4fJ9kQ2mX7vB1nL8pR3sT6wY0zA5cD",
    "openai_plain": "sk-9aB8cD7eF6gH5iJ4kL3mN2oP1qR0",
    "github": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_planted_keys_are_removed(name: str) -> None:
    secret = SECRETS[name]
    text, hits = redact(f"here is my key {secret} please use it")
    assert secret not in text
    assert hits >= 1
    assert text.startswith("here is my key [REDACTED:")


def test_bearer_tokens_and_passwords() -> None:
    text, hits = redact(
        "curl -H 'Authorization: Bearer abcDEF123456.ghiJKL' x\n"
        "password: hunter2\nPASSWORD=correct-horse-battery\nmy passphrase is 'open sesame'\n"
        "db_pwd = s3cr3t!"
    )
    for leaked in ("abcDEF123456", "hunter2", "correct-horse-battery", "open sesame", "s3cr3t!"):
        assert leaked not in text
    assert hits == 5
    assert "password: [REDACTED:password]" in text


def test_private_key_block() -> None:
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    text, hits = redact(f"my key:\n{key}\nthanks")
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in text and hits == 1
    assert text.endswith("thanks")


def test_noai_marks() -> None:
    text, hits = redact(
        "keep this [NoAI]my diagnosis is X[/NoAI] and this <noai>salary 90k</noai>\n"
        "NoAI: home address 1 Main St\nlast line [noai] unclosed secret to the end"
    )
    for leaked in ("diagnosis", "salary", "Main St", "unclosed secret"):
        assert leaked not in text
    assert hits == 4
    assert text.startswith("keep this [REDACTED:noai] and this")


def test_genui_noai_fields_are_dropped() -> None:
    value, hits = redact_value(
        {
            "form": [
                {"name": "ssn", "visibility": "NoAI", "value": "123-45-6789"},
                {"name": "city", "value": "Oslo", "token": "password: pw123456"},
            ]
        }
    )
    assert "123-45-6789" not in str(value) and "pw123456" not in str(value)
    assert "Oslo" in str(value) and hits == 2


def test_ordinary_text_is_untouched() -> None:
    text = "The password field is required. Ask the skeptic about the sky-blue task list."
    assert redact(text) == (text, 0)
