"""The context shape: counters, settings, pressure, frozen, lineage."""

from __future__ import annotations

from typing import Any, TypedDict

from memory.models import Context
from memory.pressure import pressure_state


class ContextSettings(TypedDict):
    grace_ticks: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    observation_budget_tokens: int


class ForkedFrom(TypedDict):
    slug: str | None  # null when the source context was deleted
    version: int
    tick: int | None


class ContextJson(TypedDict):
    slug: str
    name: str
    version: int
    tick: int
    last_seq: int
    settings: ContextSettings
    pressure: dict[str, Any]
    frozen: bool
    forked_from: ForkedFrom | None
    screening: str
    history_verified: bool
    erasures: int


def context_json(context: Context) -> ContextJson:
    """A context: counters (`version`, `tick`, `last_seq`), its settings (ticks, tokens,
    percents of capacity), pressure now, whether it is frozen and where it was forked from,
    its screening mode (R65), whether its history is verified (false after an unverified
    import) and how many tombstones of erased content it has (R64)."""
    return {
        "slug": context.slug,
        "name": context.name,
        "version": context.version,
        "tick": context.tick,
        "last_seq": context.last_seq,
        "settings": {
            "grace_ticks": context.grace_ticks,
            "capacity_tokens": context.capacity_tokens,
            "pressure_percent": context.pressure_percent,
            "maintenance_percent": context.maintenance_percent,
            "maintenance_exit_percent": context.maintenance_exit_percent,
            "observation_budget_tokens": context.observation_budget_tokens,
        },
        "pressure": pressure_state(context).as_dict(),
        "frozen": context.frozen,
        "forked_from": _lineage(context),
        "screening": context.screening,
        "history_verified": not context.unverified_import,
        "erasures": context.erasures.count(),
    }


def _lineage(context: Context) -> ForkedFrom | None:
    version = context.forked_version
    if version is None:
        return None
    source = context.forked_from.slug if context.forked_from_id and context.forked_from else None
    return {"slug": source, "version": version, "tick": context.forked_tick}
