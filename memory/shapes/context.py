"""The context shape: counters, settings, pressure, frozen, lineage."""

from __future__ import annotations

from typing import Annotated, TypedDict

from memory.kinds import MAINTENANCE, PRESSURE, PRESSURE_OK
from memory.models import Context
from memory.pressure import PressureState, pressure_state
from memory.shapes.fields import OPAQUE, Choices, Doc


class PressureJson(TypedDict):
    used_tokens: int
    capacity_tokens: int
    level: Annotated[str, Choices((PRESSURE_OK, PRESSURE, MAINTENANCE))]
    percent: float


def pressure_json(state: PressureState) -> PressureJson:
    """The pressure as JSON: `{used_tokens, capacity_tokens, level, percent}` (percent of
    capacity, one decimal)."""
    return {
        "used_tokens": state.used_tokens,
        "capacity_tokens": state.capacity_tokens,
        "level": state.level,
        "percent": round(100.0 * state.used_tokens / state.capacity_tokens, 1),
    }


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
    pressure: PressureJson
    frozen: Annotated[bool, Doc("writes are refused with 409 `context_frozen`")]
    forked_from: Annotated[
        ForkedFrom | None,
        OPAQUE,
        Doc("`{slug, version, tick}` of the fork's source, else null"),
    ]
    screening: Annotated[
        str,
        Doc("how written text is screened for secrets and card numbers: off, refuse, mask"),
    ]
    history_verified: Annotated[
        bool,
        Doc(
            "false when the context was imported from an export whose signature did "
            "not verify (by an admin, explicitly): its history is not proven to be the server's"
        ),
    ]
    erasures: Annotated[int, Doc("tombstones of erased content (GET erasures/)")]


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
        "pressure": pressure_json(pressure_state(context)),
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
