"""What this machine offers: the host memory available now (Linux ``/proc/meminfo``).

Owns only that reading; the engine's snapshot budget and the training plan size themselves by it.
"""

from __future__ import annotations

from pathlib import Path


def host_memory_available() -> int | None:
    """Bytes of host memory available without swapping (``MemAvailable``); None where the
    system does not say."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
