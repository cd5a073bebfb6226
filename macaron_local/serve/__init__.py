"""``macaron serve``: the assistant as a local OpenAI-compatible API (see docs/api.md).

Importing this package imports nothing heavy; the server stack (starlette, uvicorn) and the
runtime load when the command runs.
"""

from __future__ import annotations

__all__: list[str] = []
