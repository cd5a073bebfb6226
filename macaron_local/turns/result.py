"""The record of a finished turn as the CLI prints it and the UI shows it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from macaron_local.store import TurnRecord


class TurnResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    session: str
    turn: str
    label: str
    route: str  # auto | sticky | manual | fallback
    route_probs: dict[str, float]
    adapter_revision: str
    profile_hash: str
    backend: str  # local | remote
    failover_reason: str | None = None  # why a remote turn ran locally
    answer: str
    timings: dict[str, float]
    tokens: dict[str, int]
    compacted: bool
    meta: dict[str, Any]

    @classmethod
    def of(cls, record: TurnRecord) -> TurnResult:
        return cls(
            session=record.session_id,
            turn=record.id,
            label=record.label,
            route=record.route_kind,
            route_probs=record.route_probs,
            adapter_revision=record.adapter_revision,
            profile_hash=record.profile_hash,
            backend=record.backend,
            failover_reason=record.failover_reason,
            answer=record.answer,
            timings=record.timings,
            tokens=record.tokens,
            compacted=record.compacted,
            meta=record.meta,
        )
