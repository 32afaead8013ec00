"""Two-step frame retirement (R14–R17): the state machine, its rules and its writes.

How it works: docs/internals.md, section `memory/tx/retirement.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from memory.kinds import RETIRED, RETIRING
from memory.models import Context, Frame, IndexIntent, RetirementRequest

if TYPE_CHECKING:
    from memory.tx.apply.state import FrameState

PENDING = "pending"
EXPIRED = "expired"
COMPLETED = "completed"
CANCELLED = "cancelled"
STALE = "stale"


# --------------------------------------------------------------------------- rules


def due_tick_for(tick: int, grace_ticks: int) -> int:
    """A request made at `tick` expires when the context's tick reaches this value."""
    return tick + grace_ticks


def ticks_left(due_tick: int, tick: int) -> int:
    """Ticks until a window ends; 0 once it is due."""
    return max(0, due_tick - tick)


def is_due(due_tick: int, tick: int) -> bool:
    """A request due at `due_tick` expires at the first evaluation whose tick reaches it."""
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


# --------------------------------------------------------------------------- the window


def open_window(frame: FrameState, *, tick: int, grace_ticks: int, reason: str) -> str:
    """R14: open a new request on `frame`; returns the status the frame takes now
    (`retiring` until its due tick, or `retired` at once when `grace_ticks` is 0)."""
    frame.retire_generation += 1
    frame.retire_requested = True
    frame.retire_opened_cancelled = False
    frame.retire_requested_tick = tick
    frame.retire_due_tick = due_tick_for(tick, grace_ticks)
    frame.retire_reason = reason
    return RETIRED if grace_ticks == 0 else RETIRING


def cancel_window(frame: FrameState) -> None:
    """R15: revise, restore or protect inside the window cancels the pending request: the
    one this transaction opened, else the one pending when the frame was loaded."""
    if frame.retire_requested:
        frame.retire_opened_cancelled = True
    else:
        frame.retire_cancelled = True
    frame.retire_requested_tick = None
    frame.retire_due_tick = None
    frame.retire_reason = None


def close_window(frame: FrameState) -> None:
    """The request completed (zero grace, or a successor under R17): the frame retires."""
    frame.retire_due_tick = None
    frame.retire_requested_tick = None


# --------------------------------------------------------------------------- writes


class ResolvedRequest(TypedDict):
    """A frame's pending request that a commit resolves: its frame's row id, and how."""

    frame: int
    outcome: str


class OpenedRequest(TypedDict):
    """A request a commit opens (its frame by row id, or by frame id when the commit creates
    it); `outcome` is already final when the frame retired at once."""

    id: int | None
    frame_id: str
    generation: int
    due_tick: int
    reason: str
    outcome: str
    resolved_tick: int | None
    resolved_version: int | None


def request_rows(
    touched: list[FrameState], *, tick: int, version: int
) -> tuple[list[ResolvedRequest], list[OpenedRequest]]:
    """A commit's request rows: the pending requests of cancelled and early-completed frames
    to resolve (first), and the requests this commit opened (`memory.tx.store` writes them)."""
    resolved: list[ResolvedRequest] = []
    opened: list[OpenedRequest] = []
    for f in touched:
        if (f.retire_cancelled or f.retire_completed_early) and f.pk is not None:
            # Cancelled first, even when a window opened again later completes early.
            outcome = CANCELLED if f.retire_cancelled else COMPLETED
            resolved.append({"frame": f.pk, "outcome": outcome})
        if f.retire_requested:
            done = f.status != RETIRING
            final = COMPLETED if done else PENDING
            if f.retire_opened_cancelled:  # opened and cancelled here: it never retired
                final = CANCELLED
            opened.append(
                {
                    "id": f.pk,
                    "frame_id": f.frame_id,
                    "generation": f.retire_generation,
                    "due_tick": f.retire_due_tick if f.retire_due_tick is not None else tick,
                    "reason": f.retire_reason or "",
                    "outcome": final,
                    "resolved_tick": tick if done else None,
                    "resolved_version": version if done else None,
                }
            )
    return resolved, opened


def apply_due_expiries(context: Context) -> list[str]:
    """Expire every retirement due at the context's (new) tick (R22); the frame ids that
    retired, by id. Caller holds the context row lock and saves the context afterwards
    (used_tokens changes)."""
    due = list(
        Frame.objects.filter(context=context, status=RETIRING, retire_due_tick__lte=context.tick)
        .order_by("frame_id")
        .values_list("pk", "retire_generation", "revision")
    )
    expired = []
    for pk, generation, revision in due:
        frame_id = expire_retirement(
            context, pk, expected_generation=generation, expected_revision=revision
        )
        if frame_id is not None:
            expired.append(frame_id)
    return expired


def expire_retirement(
    context: Context, frame_pk: int, *, expected_generation: int, expected_revision: int
) -> str | None:
    """Complete one retirement request if it is still the one scheduled (R16).

    Caller holds the context row lock. Returns the frame id when it retired, None when the
    expiry was stale (another thread revised, restored or protected the frame meanwhile).
    """
    frame = Frame.objects.filter(pk=frame_pk, context=context).first()
    if frame is None or not expiry_applies(
        status=frame.status,
        generation=frame.retire_generation,
        revision=frame.revision,
        expected_generation=expected_generation,
        expected_revision=expected_revision,
        due_tick=frame.retire_due_tick,
        tick=context.tick,
    ):
        if frame is not None:
            RetirementRequest.objects.filter(
                frame=frame, generation=expected_generation, outcome=PENDING
            ).exclude(frame__status=RETIRING, frame__retire_generation=expected_generation).update(
                outcome=STALE, resolved_tick=context.tick, resolved_version=context.version
            )
        return None
    Frame.objects.filter(pk=frame.pk).update(
        status=RETIRED,
        retire_due_tick=None,
        retire_requested_tick=None,
        changed_version=context.version,
    )
    RetirementRequest.objects.filter(
        frame=frame, generation=expected_generation, outcome=PENDING
    ).update(outcome=EXPIRED, resolved_tick=context.tick, resolved_version=context.version)
    context.used_tokens = max(0, context.used_tokens - frame.token_estimate)
    IndexIntent.objects.create(context=context, frame=frame)
    return frame.frame_id
