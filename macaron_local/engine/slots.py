"""KV slots: one llama.cpp sequence per (adapter, purpose), in one unified KV pool.

Owns which sequence id holds which tokens under which adapter. A slot is bound to one adapter;
asking for it under another adapter wipes it first, so a prefix computed under one adapter is
never reused under another (the contamination bug of llama.cpp's server, #26207). When the pool
or the sequence ids run out, the least recently used slot is evicted (its KV dropped; it is
re-evaluated the next time it is used).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


@dataclass
class Slot:
    key: str
    seq: int
    adapter: str | None
    tokens: list[int] = field(default_factory=list)  # exactly what is in this sequence's KV
    last_used: int = 0


class SlotTable:
    """Maps slot keys to sequence ids, with LRU eviction. Calls ``drop(seq)`` to clear a sequence."""

    def __init__(self, n_seq: int, drop) -> None:  # noqa: ANN001 - Callable[[int], None]
        self._free = list(range(n_seq - 1, -1, -1))
        self._slots: dict[str, Slot] = {}
        self._drop = drop
        self._clock = itertools.count(1)

    def get(self, key: str, adapter: str | None) -> Slot:
        slot = self._slots.get(key)
        if slot is not None and slot.adapter != adapter:
            self._wipe(slot)
            slot.adapter = adapter
        if slot is None:
            if not self._free:
                self.evict_lru(keep=None, release=True)
            slot = self._slots[key] = Slot(key=key, seq=self._free.pop(), adapter=adapter)
        slot.last_used = next(self._clock)
        return slot

    def _wipe(self, slot: Slot) -> None:
        self._drop(slot.seq)
        slot.tokens.clear()

    def evict_lru(self, keep: Slot | None, release: bool = False) -> bool:
        """Drop the KV of the least recently used slot other than ``keep``; False if none."""
        victims = [s for s in self._slots.values() if s is not keep and (s.tokens or release)]
        if not victims:
            return False
        victim = min(victims, key=lambda s: s.last_used)
        self._wipe(victim)
        if release:
            del self._slots[victim.key]
            self._free.append(victim.seq)
        return True

    def forget_adapter(self, adapter: str) -> None:
        for slot in self._slots.values():
            if slot.adapter == adapter:
                self._wipe(slot)

    def clear(self) -> None:
        for slot in self._slots.values():
            self._wipe(slot)

    def snapshot(self) -> dict[str, tuple[str | None, int]]:
        """key -> (adapter, tokens held): for status displays and tests."""
        return {k: (s.adapter, len(s.tokens)) for k, s in self._slots.items()}
