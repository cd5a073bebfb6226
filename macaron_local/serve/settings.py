"""Settings of ``macaron serve``: where it listens, who may call it, how much it admits.

Owns the bind address rules (a token is required beyond loopback), the token lookup
(``MACARON_SERVE_TOKEN``, then the keyring) and the admission limits. Must not: open the model,
the store or a socket.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from macaron_local.errors import MacaronError

TOKEN_ENV = "MACARON_SERVE_TOKEN"
KEYRING_SERVICE = "macaron-local"
KEYRING_USER = "serve-token"


class ServeSettings(BaseModel):
    """Everything :func:`macaron_local.serve.app.make_app` needs besides the runtime."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8723, ge=0, le=65535)
    profile: str | None = None
    token: SecretStr | None = None
    concurrency: int = Field(default=4, ge=1, le=256)  # turns handed to the runtime at once
    queue: int = Field(default=32, ge=0, le=4096)  # requests waiting for one of those
    retry_after_s: int = Field(default=2, ge=1, le=3600)
    max_body_bytes: int = Field(default=8 << 20, ge=1024, le=1 << 30)  # beyond: 413


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve beyond loopback


def resolve_token(environ: Mapping[str, str] | None = None) -> SecretStr | None:
    """The bearer token: ``MACARON_SERVE_TOKEN``, else the keyring; None when neither has one."""
    env = os.environ if environ is None else environ
    value = env.get(TOKEN_ENV, "").strip()
    if value:
        return SecretStr(value)
    stored = _keyring_token()
    return SecretStr(stored) if stored else None


def _keyring_token() -> str | None:
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            return keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
        except KeyringError:
            return None  # no usable backend: the environment is the only source
    except ImportError:
        return None


def check_bind(settings: ServeSettings) -> None:
    """Refuse to listen beyond loopback without a token (raised before anything is bound)."""
    if settings.token is None and not is_loopback(settings.host):
        raise MacaronError(
            f"refusing to listen on {settings.host}: beyond loopback a bearer token is required",
            hint=f"set {TOKEN_ENV}, or store one with `keyring set {KEYRING_SERVICE} "
            f"{KEYRING_USER}`, or bind to 127.0.0.1",
        )
    if settings.token is not None and len(settings.token.get_secret_value()) < 16:
        raise MacaronError(
            "the serve token is shorter than 16 characters",
            hint='generate one: python -c "import secrets; print(secrets.token_urlsafe(32))"',
        )
