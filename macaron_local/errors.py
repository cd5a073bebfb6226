"""The one error hierarchy of macaron-local.

Every error the runtime raises on purpose derives from :class:`MacaronError` and carries what a
user needs to act on it (a file, a line, a field path, a limit, a URL). The CLI and the TUI turn
these into messages at the edge; nothing below the edge swallows them.

    MacaronError
    ├── ModelError                 the base model file
    │   ├── ModelNotFoundError       missing file / package
    │   ├── ModelFormatError         not GGUF, truncated, wrong checksum
    │   └── ModelLoadError           llama.cpp refused it
    ├── AdapterError               a LoRA adapter (names the file or adapter)
    │   ├── AdapterFormatError       corrupt / not a LoRA GGUF
    │   │   └── AdapterChecksumError   its sha256 is not the one its revision names
    │   ├── AdapterMismatchError     other architecture, other base, shape mismatch
    │   └── UnknownAdapterError      no adapter by that name is loaded
    ├── EngineError                generation-time failures
    │   ├── ContextOverflowError     prompt (+ budget) longer than the context
    │   ├── GrammarError             GBNF that llama.cpp rejects
    │   ├── CancelledError           a request or a run cancelled by the user
    │   └── DecodeError              llama_decode failed
    ├── ContractError              HCP profiles (path, line, field)
    ├── ApprovalRequiredError      security-relevant contract change not yet approved
    ├── StoreError                 SQLite store
    ├── TurnError                  a turn failed and was rolled back
    ├── RefineError                training / lineage
    ├── PluginError                a plugin failed (import, hook, timeout)
    └── RemoteError                the remote Venti endpoint
"""

from __future__ import annotations

from pathlib import Path


class MacaronError(Exception):
    """Base of every error macaron-local raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class ModelError(MacaronError):
    """A problem with the base model file."""

    def __init__(self, message: str, *, path: Path | str | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.path = Path(path) if path is not None else None


class ModelNotFoundError(ModelError):
    """The model file (or the package that ships it) is not there."""


class ModelFormatError(ModelError):
    """The file is not a usable GGUF model: wrong magic, truncated, or a checksum mismatch."""


class ModelLoadError(ModelError):
    """llama.cpp refused to load the model or to create a context."""


class AdapterError(MacaronError):
    """A problem with one LoRA adapter; the engine keeps serving the others."""

    def __init__(
        self,
        message: str,
        *,
        name: str | None = None,
        path: Path | str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.name = name
        self.path = Path(path) if path is not None else None


class AdapterFormatError(AdapterError):
    """The adapter file is corrupt or not a GGUF LoRA."""


class AdapterChecksumError(AdapterFormatError):
    """The adapter file's sha256 is not the one its manifest entry or revision id names."""


class AdapterMismatchError(AdapterError):
    """The adapter was made for another architecture, another base, or has wrong shapes."""


class UnknownAdapterError(AdapterError):
    """No adapter with that name is loaded."""


class EngineError(MacaronError):
    """A failure while running a request on the engine."""


class ContextOverflowError(EngineError):
    """The prompt plus its generation budget does not fit the context."""

    def __init__(self, message: str, *, n_tokens: int, limit: int, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.n_tokens = n_tokens
        self.limit = limit


class GrammarError(EngineError):
    """A GBNF grammar that llama.cpp rejects (checked before use: a bad one segfaults)."""


class CancelledError(EngineError):
    """The user cancelled: a request between two tokens, a refine run at its next forward."""


class DecodeError(EngineError):
    """llama_decode returned an error."""


class ContractError(MacaronError):
    """An HCP profile is invalid. ``path`` is the file, ``where`` the line or field path."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        where: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.path = Path(path) if path is not None else None
        self.where = where

    def __str__(self) -> str:
        loc = ""
        if self.path is not None:
            loc = str(self.path)
        if self.where:
            loc = f"{loc}: {self.where}" if loc else self.where
        return f"{loc}: {self.message}" if loc else self.message


class ApprovalRequiredError(ContractError):
    """A profile carries a security-relevant change that no human has approved yet."""


class StoreError(MacaronError):
    """The SQLite store failed or holds something unexpected."""


class TurnError(MacaronError):
    """A turn failed; the session was rolled back to its state before the turn."""


class RefineError(MacaronError):
    """Training, export or lineage failed."""


class PluginError(MacaronError):
    """A plugin failed to import, raised in a hook, or timed out."""


class RemoteError(MacaronError):
    """The remote (Venti) endpoint failed."""
