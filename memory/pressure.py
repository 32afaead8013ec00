"""Pressure levels and the maintenance gate (R24, R25), as plain rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memory.kinds import MAINTENANCE, PRESSURE, PRESSURE_OK


class HasPressureSettings(Protocol):
    used_tokens: int
    capacity_tokens: int
    pressure_percent: int
    maintenance_percent: int
    maintenance_exit_percent: int
    in_maintenance: bool


@dataclass(frozen=True)
class PressureState:
    used_tokens: int
    capacity_tokens: int
    level: str
    in_maintenance: bool


def pressure_state(context: HasPressureSettings, used_tokens: int | None = None) -> PressureState:
    """The level (`ok`, `pressure` or `maintenance`, R24) for `used_tokens` (default: the
    context's own) against its capacity, in tokens. Reads the settings only, no lock.

    Maintenance starts at `maintenance_percent` and, once entered, lasts until usage falls
    below `maintenance_exit_percent` (hysteresis, so the gate does not flap).
    """
    used = context.used_tokens if used_tokens is None else used_tokens
    percent = 100.0 * used / context.capacity_tokens
    if percent >= context.maintenance_percent:
        in_maintenance = True
    elif context.in_maintenance:
        in_maintenance = percent >= context.maintenance_exit_percent
    else:
        in_maintenance = False
    if in_maintenance:
        level = MAINTENANCE
    elif percent >= context.pressure_percent:
        level = PRESSURE
    else:
        level = PRESSURE_OK
    return PressureState(used, context.capacity_tokens, level, in_maintenance)
