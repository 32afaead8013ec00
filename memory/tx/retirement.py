"""Two-step frame retirement as plain rules (R14–R17), shared by the engine and expiry."""

from __future__ import annotations

from dataclasses import dataclass

from memory.kinds import ACTIVE, RETIRED, RETIRING


@dataclass
class RetireWindow:
    requested_tick: int
    due_tick: int
    reason: str
    generation: int


def due_tick_for(tick: int, grace_ticks: int) -> int:
    """A request made at `tick` expires when the context's tick reaches this value."""
    return tick + grace_ticks


def ticks_left(due_tick: int, tick: int) -> int:
    return max(0, due_tick - tick)


def is_due(due_tick: int, tick: int) -> bool:
    return tick >= due_tick


def expiry_applies(
    *,
    status: str,
    generation: int,
    revision: int,
    expected_generation: int,
    expected_revision: int,
    due_tick: int | None,
    tick: int,
) -> bool:
    """R16: an expiry acts only on the very request and revision it was scheduled for."""
    return (
        status == RETIRING
        and generation == expected_generation
        and revision == expected_revision
        and due_tick is not None
        and is_due(due_tick, tick)
    )


def window_view(
    status: str, requested_tick: int | None, due_tick: int | None, reason: str | None, tick: int
) -> dict[str, object] | None:
    """How a retiring frame's window is shown to models, people and API clients."""
    if status != RETIRING or due_tick is None:
        return None
    return {
        "requested_tick": requested_tick,
        "due_tick": due_tick,
        "ticks_left": ticks_left(due_tick, tick),
        "reason": reason or "",
    }


def counts_in_input(status: str) -> bool:
    """Active and retiring frames are in the model input; retiring ones keep their cost."""
    return status in (ACTIVE, RETIRING)


__all__ = [
    "ACTIVE",
    "RETIRED",
    "RETIRING",
    "RetireWindow",
    "counts_in_input",
    "due_tick_for",
    "expiry_applies",
    "is_due",
    "ticks_left",
    "window_view",
]
