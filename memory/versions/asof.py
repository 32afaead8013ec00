"""Reads as of a point in history (R52): frames, one frame, relations, recall.

How it works: docs/internals.md, section `memory/versions/asof.py`."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction

from memory.errors import InvalidRequest, NotFound
from memory.models import Context, Frame, FrameRevision, Relation
from memory.read.history import check_ref
from memory.read.lists import list_relations
from memory.read.paging import Page
from memory.shapes.history import WriteEntry
from memory.shapes.recall import RecallJson
from memory.sql import named_rows
from memory.versions.points import Point, as_of_sql


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _frame(data: dict[str, Any]) -> Frame:
    data["body"] = _loads(data["body"])
    data["sources"] = _loads(data["sources"])
    return Frame(**data)


def _frames(statement: str, params: dict[str, Any]) -> list[Frame]:
    with connection.cursor() as cur:
        cur.execute(as_of_sql(statement), params)
        return [_frame(row) for row in named_rows(cur)]


def frames_as_of(
    context: Context,
    point: Point,
    *,
    status: str | None = None,
    after_id: str = "",
    limit: int = 100,
) -> Page[Frame]:
    """Frames as they were at `point` (R52), ordered by id after `after_id`, at most `limit`
    (optionally one `status`); unsaved Frame objects built from the history. No lock."""
    params = {**point.params(), "after": after_id, "status": status, "limit": limit + 1}
    rows = _frames("frames_page_at_status" if status else "frames_page_at", params)
    return Page(items=rows[:limit], has_more=len(rows) > limit)


def frame_as_of(context: Context, point: Point, frame_id: str) -> Frame | None:
    """One frame as it was at `point`, or None when it did not exist yet (R52)."""
    rows = _frames("frame_at", {**point.params(), "fid": frame_id})
    return rows[0] if rows else None


def revisions_as_of(frame: Frame, point: Point) -> list[FrameRevision]:
    """The frame's revisions written up to `point`'s version, oldest first."""
    return list(
        FrameRevision.objects.filter(frame_id=frame.pk, version__lte=point.version)
        .select_related("transaction")
        .order_by("revision")
    )


def write_history_as_of(context: Context, frame_id: str, point: Point) -> list[WriteEntry]:
    """The frame's write history (`frame_write_history` entries) up to `point`'s version."""
    from memory.read.history import frame_write_history

    return [h for h in frame_write_history(context, frame_id) if h["version"] <= point.version]


def relations_as_of(context: Context, point: Point, **filters: Any) -> Page[Relation]:
    """Relations as they were at `point` (R52): `memory.read.lists.list_relations`, same
    filters, at the point's version."""
    return list_relations(context, version=point.version, **filters)


# -- recall --------------------------------------------------------------------------------
# Recall's one statement reads memory_frame, memory_relation, memory_event and
# memory_context. As of a point it runs unchanged against temporary views of those names
# (PostgreSQL looks in the session's temporary schema first), holding the rows as they were,
# inside a transaction that is rolled back: the views never outlive the call.


class _Rollback(Exception):
    def __init__(self, result: RecallJson) -> None:
        self.result = result


def _literal_sql(sql: str, params: dict[str, Any]) -> str:
    """View bodies cannot take parameters: the point's numbers are inlined (all ints)."""
    for key, value in params.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{key} must be an int")
        sql = sql.replace(f"%({key})s", str(value))
    return sql


def recall_as_of(context: Context, point: Point, **kwargs: Any) -> RecallJson:
    """`memory.recall.graph.recall` (same arguments, same shape) over the graph as it was at
    `point` (R52). InvalidRequest with `as_observation` (the past cannot be appended to) or
    with `view_version`/`evaluation_id` (they name another point)."""
    from memory.recall.graph import recall, root_kind

    if kwargs.get("as_observation"):
        raise InvalidRequest(
            "a recall as of a past version cannot be appended as an observation",
            details=[{"field": "as_observation"}],
        )
    if kwargs.get("view_version") is not None or kwargs.get("evaluation_id") is not None:
        raise InvalidRequest(
            "as_of and view_version/evaluation exclude each other",
            details=[{"field": "as_of"}],
        )
    check_ref(kwargs.get("frame_id"), "frame_id")  # refused before the views are made
    if point.present:
        return recall(context, **kwargs)
    params = {k: v for k, v in point.params().items() if k in ("ctx", "v", "tick", "seq")}
    names = ("view_context_at", "view_relations_at", "view_events_at", "view_frames_at")
    views = [_literal_sql(as_of_sql(name), params) for name in names]
    try:
        with transaction.atomic():
            with connection.cursor() as cur:
                for view in views:
                    cur.execute(view)
            raise _Rollback(recall(context, as_of=point.version, **kwargs))
    except _Rollback as done:
        return done.result
    except NotFound as missing:
        # The frame (or event) may well exist now: say which point it is missing at.
        root = kwargs.get("frame_id")
        raise NotFound(
            f"{root_kind(str(root))} {root!r} did not exist at version {point.version}",
            details=missing.details,
        ) from None
