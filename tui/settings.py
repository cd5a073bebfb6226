"""The app's settings: ``<config>/settings.toml``, then ``MACARON_TUI_*`` environment variables.

Owns: the settings schema, reading it (a broken file becomes a ContractError naming the file, and
the entry point falls back to the defaults) and writing it back from the settings screen. Must
not: resolve the path at import time.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import tomli_w
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from macaron_local import paths
from macaron_local.errors import ContractError

THEMES = {"dark": "textual-dark", "light": "textual-light"}


class Settings(BaseSettings):
    """What the user can change. ``keys`` maps a binding id (see the help screen) to keys."""

    model_config = SettingsConfigDict(env_prefix="MACARON_TUI_", extra="forbid", frozen=True)

    theme: Literal["dark", "light"] = "dark"
    profile: str | None = None
    show_timings: bool = False
    show_inspector: bool = True
    show_sidebar: bool = True
    history_size: int = Field(default=200, ge=0, le=10_000)
    export_dir: Path | None = None
    keys: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # the file is read by load_settings and passed in; the environment wins over it
        return (env_settings, init_settings)


def settings_path() -> Path:
    return paths.config_dir() / "settings.toml"


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings file (missing: defaults) with the environment on top."""
    path = path or settings_path()
    data: dict[str, object] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ContractError(
                f"settings file is not valid TOML: {exc}",
                path=path,
                hint="fix or delete the file; the defaults are used",
            ) from exc
    try:
        return Settings(**data)  # type: ignore[arg-type]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ContractError(
            f"bad setting: {err['msg']}",
            path=path,
            where=where,
            hint="fix or delete the file; the defaults are used",
        ) from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings file (only values that differ from the defaults)."""
    path = path or settings_path()
    data = settings.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
    paths.ensure(path.parent)
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path
