"""Search's filters (R33): checked, refused when no document can satisfy them together, and
written as SQL conditions on the document `d` (`memory.search.query` uses them).

    time_range(since, until) -> (start, end)   InvalidRequest `invalid_time`
    conflicts(type, status, kind, transactions)   InvalidRequest `conflicting_filters`
    sql_filters(type, values, start, end, transactions) -> (" AND d.... ", params)
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memory.errors import ErrorCode, InvalidRequest
from memory.kinds import (
    ACTIVE,
    EVENT_KINDS,
    OBSERVATION_KINDS,
    RECORDED,
    RETIRED,
    RETIRING,
    TRANSACTION,
)
from memory.times import read_time


# Filters that no document can satisfy together: each pair answers 400
# `conflicting_filters` naming both fields, rather than an empty page that reads as "no
# match" (frames are never of an event kind or `recorded`; events are never `retiring`).
def conflicts(
    type: str | None, status: str | None, kind: str | None, transactions: bool | None
) -> None:
    """InvalidRequest `conflicting_filters` naming both fields of each pair that no
    document can satisfy together."""
    is_frame = type == "frame" or kind == "frame"
    is_event = type == "event" or kind not in (None, "frame")
    found: list[tuple[str, str, str]] = []
    if is_frame and is_event:
        found.append(("type", "kind", f"type={type} cannot hold kind={kind}"))
    if status == RECORDED and is_frame:
        frame_field = "type" if type == "frame" else "kind"
        found.append((frame_field, "status", "frames are never recorded (only events are)"))
    if status == RETIRING and is_event:
        event_field = "type" if type == "event" else "kind"
        found.append((event_field, "status", "events are never retiring (only frames are)"))
    if kind in OBSERVATION_KINDS and status == RECORDED:
        found.append(("kind", "status", f"{kind} events are observations: active or retired"))
    if kind in EVENT_KINDS and kind not in OBSERVATION_KINDS and status in (ACTIVE, RETIRED):
        found.append(("kind", "status", f"{kind} events are not observations: only recorded"))
    if kind == TRANSACTION and transactions is False:
        found.append(
            ("kind", "transactions", "kind=transaction asks for what transactions=false leaves out")
        )
    if found:
        raise InvalidRequest(
            "these filters can never match together: " + "; ".join(why for *_, why in found),
            code=ErrorCode.CONFLICTING_FILTERS,
            details=[{"field": name} for pair in found for name in pair[:2]],
        )


def time_range(since: Any, until: Any) -> tuple[datetime | None, datetime | None]:
    """`since` and `until` read (`memory.times.read_time`: in UTC), `since` earlier;
    InvalidRequest `invalid_time` otherwise."""
    start = None if since is None else read_time(since, "since")
    end = None if until is None else read_time(until, "until")
    if start is not None and end is not None and start >= end:
        why = "since must be earlier than until (since is inclusive, until exclusive)"
        raise InvalidRequest(
            why,
            code=ErrorCode.INVALID_TIME,
            details=[{"field": "since", "message": why}, {"field": "until", "message": why}],
        )
    return start, end


def sql_filters(
    type: str | None,
    values: dict[str, str | None],
    start: datetime | None,
    end: datetime | None,
    transactions: bool,
) -> tuple[str, dict[str, Any]]:
    """SQL conditions on the document `d` (values as placeholders) and their parameters."""
    filters: list[str] = []
    params: dict[str, Any] = {}
    if type == "frame":
        filters.append("d.frame_id IS NOT NULL")
    elif type == "event":
        filters.append("d.event_id IS NOT NULL")
    for name, value in values.items():
        if value is not None:
            filters.append(f"d.{name} = %({name})s")
            params[name] = value
    if not transactions:
        filters.append(f"d.kind <> '{TRANSACTION}'")
    if start is not None:
        filters.append("d.created_at >= %(since)s")
        params["since"] = start
    if end is not None:
        filters.append("d.created_at < %(until)s")
        params["until"] = end
    return "".join(f" AND {f}" for f in filters), params
