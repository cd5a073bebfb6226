"""The model manager: list, pull (resumable, verified), verify and remove model files.

``macaron models ...`` is its command line (``macaron_local.model_manager.cli``).
"""

from __future__ import annotations

from macaron_local.model_manager.download import DownloadError, check_space, fetch, remote_file
from macaron_local.model_manager.store import (
    FileState,
    ModelFile,
    check,
    model_dir,
    model_files,
    pull,
    remove,
    verify_model,
)

__all__ = [
    "DownloadError",
    "FileState",
    "ModelFile",
    "check",
    "check_space",
    "fetch",
    "model_dir",
    "model_files",
    "pull",
    "remote_file",
    "remove",
    "verify_model",
]
