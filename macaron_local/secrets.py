"""Secrets: the remote API key, resolved explicit value -> OS keyring -> environment.

Owns where the key may live: the OS keyring (service ``macaron-local``) or the
``MACARON_REMOTE_API_KEY`` environment variable, and nowhere else. A resolved key is held as a
pydantic :class:`SecretStr`, whose ``repr``/``str`` never show the value; only the HTTP client
asks for the plain value, to build the ``Authorization`` header.
Must not: write a key to a file, the database, a profile, a log or an exception message; touch
the keyring at import time (a backend is chosen on first use).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

from macaron_local.errors import RemoteError

SERVICE = "macaron-local"
ACCOUNT = "remote-api-key"
ENV_VAR = "MACARON_REMOTE_API_KEY"
ENV_HINT = f"set the key in the environment instead: export {ENV_VAR}=..."

KeySource = Literal["explicit", "keyring", "environment"]


@dataclass(frozen=True)
class ApiKey:
    """A resolved key and where it came from (the value stays a SecretStr)."""

    value: SecretStr
    source: KeySource


@dataclass(frozen=True)
class KeyringStatus:
    """Whether an OS keyring backend works here, and which one."""

    usable: bool
    backend: str
    reason: str | None = None


def keyring_status() -> KeyringStatus:
    """Probe the active keyring backend without reading or writing any key."""
    import keyring
    from keyring.backends import fail

    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # a broken backend config must not crash the CLI
        return KeyringStatus(False, "unknown", f"the keyring could not start: {type(exc).__name__}")
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if isinstance(backend, fail.Keyring):
        return KeyringStatus(False, name, "no OS keyring backend is available on this machine")
    try:
        priority = float(type(backend).priority)
    except Exception:  # a backend raises here to say it is not viable
        priority = 0.0
    if priority <= 0 and not _is_chainer_with_backends(backend):
        return KeyringStatus(False, name, "the keyring backend reports it is not usable")
    return KeyringStatus(True, name)


def _is_chainer_with_backends(backend: object) -> bool:
    from keyring.backends import chainer

    return isinstance(backend, chainer.ChainerBackend) and bool(backend.backends)


def resolve_api_key(
    explicit: str | SecretStr | None = None, *, environ: Mapping[str, str] | None = None
) -> ApiKey | None:
    """The key to use: ``explicit``, else the keyring's, else ``$MACARON_REMOTE_API_KEY``."""
    if explicit is not None:
        value = explicit if isinstance(explicit, SecretStr) else SecretStr(explicit)
        if value.get_secret_value():
            return ApiKey(value, "explicit")
    stored = _keyring_get()
    if stored:
        return ApiKey(SecretStr(stored), "keyring")
    env = os.environ if environ is None else environ
    if env.get(ENV_VAR):
        return ApiKey(SecretStr(env[ENV_VAR]), "environment")
    return None


def _keyring_get() -> str | None:
    if not keyring_status().usable:
        return None
    import keyring
    from keyring.errors import KeyringError

    try:
        return keyring.get_password(SERVICE, ACCOUNT)
    except KeyringError:
        return None


def save_api_key(value: SecretStr) -> str:
    """Store the key in the OS keyring; returns the backend's name. Raises RemoteError."""
    if not value.get_secret_value().strip():
        raise RemoteError("an empty API key was not saved")
    status = keyring_status()
    if not status.usable:
        raise RemoteError(f"cannot save the API key: {status.reason}", hint=ENV_HINT)
    import keyring
    from keyring.errors import KeyringError

    try:
        keyring.set_password(SERVICE, ACCOUNT, value.get_secret_value().strip())
    except KeyringError as exc:  # the message is the backend's, never the key
        raise RemoteError(
            f"the keyring refused the key ({type(exc).__name__})", hint=ENV_HINT
        ) from None
    return status.backend


def delete_api_key() -> bool:
    """Remove the stored key; False when there was none (or no keyring works here)."""
    if not keyring_status().usable:
        return False
    import keyring
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        keyring.delete_password(SERVICE, ACCOUNT)
    except PasswordDeleteError:
        return False
    except KeyringError as exc:
        raise RemoteError(f"the keyring could not delete the key ({type(exc).__name__})") from None
    return True


def masked(value: SecretStr) -> str:
    """A hint of which key this is for status output: its length and last two characters."""
    plain = value.get_secret_value()
    tail = plain[-2:] if len(plain) >= 12 else ""
    return f"{len(plain)} characters" + (f", ending …{tail}" if tail else "")
