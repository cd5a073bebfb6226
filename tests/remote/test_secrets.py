"""Secrets: resolution order, SecretStr, the keyring (a file-based test backend), the CLI."""

from __future__ import annotations

import keyring
import pytest
from click.testing import CliRunner
from keyring.backends import fail
from pydantic import SecretStr

from macaron_local import secrets
from macaron_local.errors import RemoteError
from macaron_local.remote.cli import remote_group
from tests.remote.conftest import FileKeyring

KEY = "sk-planted-0123456789abcdef"


def test_resolution_order_explicit_keyring_environment(
    test_keyring: FileKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert secrets.resolve_api_key() is None
    monkeypatch.setenv(secrets.ENV_VAR, "from-env")
    assert secrets.resolve_api_key().source == "environment"
    secrets.save_api_key(SecretStr("from-keyring"))
    found = secrets.resolve_api_key()
    assert (found.source, found.value.get_secret_value()) == ("keyring", "from-keyring")
    found = secrets.resolve_api_key("explicit-one")
    assert (found.source, found.value.get_secret_value()) == ("explicit", "explicit-one")


def test_a_resolved_key_never_shows_in_repr_or_str(test_keyring: FileKeyring) -> None:
    secrets.save_api_key(SecretStr(KEY))
    found = secrets.resolve_api_key()
    assert KEY not in repr(found) and KEY not in str(found) and KEY not in str(found.value)
    assert KEY not in secrets.masked(found.value)


def test_keyring_round_trip_and_logout(test_keyring: FileKeyring) -> None:
    assert secrets.keyring_status().usable
    secrets.save_api_key(SecretStr(KEY))
    assert keyring.get_password(secrets.SERVICE, secrets.ACCOUNT) == KEY
    assert secrets.delete_api_key() is True
    assert secrets.delete_api_key() is False
    assert secrets.resolve_api_key() is None


def test_no_keyring_backend_says_so_and_offers_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keyring.set_keyring(fail.Keyring())
    status = secrets.keyring_status()
    assert not status.usable and "no OS keyring" in (status.reason or "")
    with pytest.raises(RemoteError) as err:
        secrets.save_api_key(SecretStr(KEY))
    assert secrets.ENV_VAR in (err.value.hint or "")
    monkeypatch.setenv(secrets.ENV_VAR, KEY)
    assert secrets.resolve_api_key().source == "environment"


def test_cli_login_prompts_without_echo_and_status_hides_the_key(
    test_keyring: FileKeyring,
) -> None:
    runner = CliRunner()
    result = runner.invoke(remote_group, ["login"], input=KEY + "\n")
    assert result.exit_code == 0, result.output
    assert KEY not in result.output  # hide_input: the typed key is not echoed
    assert keyring.get_password(secrets.SERVICE, secrets.ACCOUNT) == KEY
    status = runner.invoke(remote_group, ["status", "--no-check"])
    assert status.exit_code == 0, status.output
    assert "keyring" in status.output and KEY not in status.output
    logout = runner.invoke(remote_group, ["logout"])
    assert logout.exit_code == 0 and "removed" in logout.output
    assert keyring.get_password(secrets.SERVICE, secrets.ACCOUNT) is None


def test_cli_login_on_a_headless_box_points_at_the_environment() -> None:
    keyring.set_keyring(fail.Keyring())
    result = CliRunner().invoke(remote_group, ["login"], input=KEY + "\n")
    assert result.exit_code == 1
    assert "no OS keyring" in result.output and secrets.ENV_VAR in result.output
    status = CliRunner().invoke(remote_group, ["status", "--no-check", "--json"])
    assert '"hint"' in status.output and secrets.ENV_VAR in status.output
