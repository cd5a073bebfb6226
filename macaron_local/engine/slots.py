"""KV slots: one conversation prefix per (adapter, purpose), a few of them resident at a time.

Owns which tokens each slot holds under which adapter. The context has ``seats`` KV sequences
(one on a CPU, one per live slot when the KV lives on a GPU, see ``EngineConfig.resident_slots``);
a slot holding one is *resident*, and a request on it needs no copy at all. Taking the seat of
another slot parks that one as a state snapshot in host memory (``llama_state_seq_get_data``, a
copy of only its used cells) and restores the target's snapshot (``llama_state_seq_set_data``, a
few ms), so each adapter's prefix is reused turn after turn, a decode attends only over its own
cells, and KV computed under one adapter is never reused under another: a slot asked for under
another adapter is wiped first (the contamination bug of llama.cpp's server, #26207). Snapshots
beyond the memory budget are dropped by when each slot is next expected (its last use plus its
usual interval between uses): the one needed furthest ahead goes first, a slot used only once
before it; a seat is given up by the same rule. Specialists taking turns are a cycle, and
least-recently-used eviction dropped exactly the slot needed next; this keeps it. A dropped
slot is re-evaluated on its next use.

A recurrent or hybrid base (Mamba, Gated DeltaNet) cannot cut the tail off a sequence's state,
so a prompt that shares only a prefix with what a slot holds would be read again from the start.
For those the engine keeps *checkpoints*: host copies of a slot's state just short of the end of
its recent prompts (:meth:`SlotTable.checkpoint`), and a later prompt that extends one restores it
(:meth:`SlotTable.rewind`) instead of starting over: the router's fixed prompt, a view's earlier
turns. Checkpoints belong to their slot's adapter and go when the slot is wiped.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from macaron_local.engine._lcpp import StateBuffer

USES = 8  # uses remembered per slot, to learn its usual interval


@dataclass(frozen=True)
class Checkpoint:
    """A slot's state after reading exactly ``tokens`` (a host copy)."""

    tokens: tuple[int, ...]
    state: StateBuffer


@dataclass
class Slot:
    key: str
    adapter: str | None
    tokens: list[int] = field(default_factory=list)  # exactly what its KV (or snapshot) holds
    snapshot: StateBuffer | None = None  # while parked
    seq: int | None = None  # the KV sequence (seat) it holds while resident
    last_used: int = 0
    uses: list[int] = field(default_factory=list)  # clock of its latest uses (at most USES)
    checkpoints: list[Checkpoint] = field(default_factory=list)  # shortest first

    @property
    def snapshot_bytes(self) -> int:
        return len(self.snapshot) if self.snapshot is not None else 0

    @property
    def host_bytes(self) -> int:
        """Host memory this slot holds: its snapshot and its checkpoints."""
        return self.snapshot_bytes + sum(len(c.state) for c in self.checkpoints)

    def used(self, now: int) -> None:
        self.last_used = now
        self.uses = [*self.uses[-(USES - 1) :], now]

    def next_use(self) -> float:
        """When this slot is expected again: its last use plus the median gap between its
        uses (never, for a slot used once)."""
        if len(self.uses) < 2:
            return float("inf")
        gaps = sorted(b - a for a, b in itertools.pairwise(self.uses))
        return self.last_used + gaps[len(gaps) // 2]


class SlotTable:
    """Slots by key, which ones hold a KV sequence (a seat), and the parking policy.

    ``save(seq)`` returns a sequence's state, ``restore(seq, buf)`` loads one (False if it did
    not fit), ``clear(seq)`` empties it; the engine supplies them (llama.cpp calls). With one
    seat every switch parks; with more, a switch parks only when every seat is taken, and then
    the seated slot needed furthest ahead gives its seat up.
    """

    def __init__(
        self,
        save: Callable[[int], StateBuffer],
        restore: Callable[[int, StateBuffer], bool],
        clear: Callable[[int], bool],
        budget_bytes: int,
        seats: int = 1,
    ) -> None:
        self._save, self._restore, self._clear = save, restore, clear
        self.budget = budget_bytes
        self._slots: dict[str, Slot] = {}
        self._seats: list[Slot | None] = [None] * max(1, seats)
        self.resident: Slot | None = None  # the slot entered last
        self._clock = itertools.count(1)

    def get(self, key: str, adapter: str | None) -> Slot:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = Slot(key=key, adapter=adapter)
        elif slot.adapter != adapter:
            self.wipe(slot)
            slot.adapter = adapter
        slot.used(next(self._clock))
        return slot

    def enter(self, slot: Slot) -> None:
        """Give ``slot`` a seat (a KV sequence): a free one, or the one of the seated slot
        needed furthest ahead, parked; then restore ``slot``'s snapshot into it."""
        self.resident = slot
        if slot.seq is not None:
            return
        seq = next((i for i, held in enumerate(self._seats) if held is None), None)
        if seq is None:
            victim = max(
                (held for held in self._seats if held is not None),
                key=lambda s: (s.next_use(), -s.last_used),
            )
            seq = self._park(victim)
        self._seats[seq], slot.seq = slot, seq
        if slot.snapshot is not None:
            buf, slot.snapshot = slot.snapshot, None
            if not self._restore(seq, buf):
                slot.tokens.clear()
                self._clear(seq)
        self._enforce_budget()

    def _park(self, slot: Slot) -> int:
        """Move ``slot``'s KV to a host snapshot; returns the seat it gave up."""
        seq = slot.seq
        assert seq is not None
        slot.snapshot = self._save(seq) if slot.tokens else None
        self._clear(seq)
        self._seats[seq], slot.seq = None, None
        return seq

    def checkpoint(self, slot: Slot, state: StateBuffer, limit: int) -> None:
        """Keep ``state`` as ``slot``'s checkpoint at the tokens it holds now. Checkpoints that
        are not a prefix of those tokens can serve no later prompt that extends them and go;
        beyond ``limit`` the second shortest goes (the shortest is the most stable prefix);
        all of them count against the host budget, seated or parked."""
        tokens = tuple(slot.tokens)
        kept = [c for c in slot.checkpoints if tokens[: len(c.tokens)] == c.tokens != tokens]
        kept.append(new := Checkpoint(tokens, state))
        while len(kept) > max(1, limit):
            del kept[1 if len(kept) > 1 else 0]
        slot.checkpoints = kept
        self._enforce_budget(keep=new)

    def best_checkpoint(
        self, slot: Slot, tokens: Sequence[int], cap: int, above: int = 0
    ) -> Checkpoint | None:
        """The longest checkpoint of ``slot`` longer than ``above`` tokens that is a prefix of
        ``tokens[:cap]`` (lengths are compared first: a decode step checks none)."""
        fits = [
            c
            for c in slot.checkpoints
            if above < len(c.tokens) <= cap and tuple(tokens[: len(c.tokens)]) == c.tokens
        ]
        return max(fits, key=lambda c: len(c.tokens), default=None)

    def rewind(self, slot: Slot, cp: Checkpoint) -> None:
        """Load checkpoint ``cp`` into the seated ``slot``; if llama.cpp refuses it, the slot
        is left empty and the checkpoint dropped."""
        assert slot.seq is not None
        self._clear(slot.seq)
        if self._restore(slot.seq, cp.state):
            slot.tokens[:] = cp.tokens
            return
        self._clear(slot.seq)
        slot.tokens.clear()
        slot.checkpoints = [c for c in slot.checkpoints if c is not cp]

    def wipe(self, slot: Slot) -> None:
        slot.tokens.clear()
        slot.snapshot = None
        slot.checkpoints = []
        if slot.seq is not None:
            self._clear(slot.seq)

    def _enforce_budget(self, keep: Checkpoint | None = None) -> None:
        """Host memory back within the budget: parked slots go first, then seated slots'
        checkpoints (longest first), each in the order of the slot needed furthest ahead (among
        those, the least recently used); ``keep`` (the checkpoint just taken) stays."""
        order = sorted(self._slots.values(), key=lambda s: (-s.next_use(), s.last_used))
        total = sum(s.host_bytes for s in order)
        for victim in order:
            if total <= self.budget:
                return
            if victim.seq is None and victim.host_bytes:
                total -= victim.host_bytes
                self.wipe(victim)
        for slot in order:
            for cp in [c for c in slot.checkpoints if c is not keep][::-1]:
                if total <= self.budget:
                    return
                slot.checkpoints.remove(cp)
                total -= len(cp.state)

    def forget_adapter(self, adapter: str) -> None:
        for slot in self._slots.values():
            if slot.adapter == adapter:
                self.wipe(slot)

    def clear(self) -> None:
        for slot in self._slots.values():
            self.wipe(slot)

    def snapshot(self) -> dict[str, tuple[str | None, int]]:
        """key -> (adapter, tokens held): for status displays and tests."""
        return {k: (s.adapter, len(s.tokens)) for k, s in self._slots.items()}

    def parked_bytes(self) -> int:
        return sum(s.snapshot_bytes for s in self._slots.values())
