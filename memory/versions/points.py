"""Points in a context's history, and the SQL that reads the state at one (R52).

How it works: docs/internals.md, section `memory/versions/points.py`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from memory.errors import ErrorCode, InvalidField, InvalidRequest
from memory.models import Context
from memory.tx.loader import FRAME_STATE_COLUMNS


@dataclass(frozen=True)
class Point:
    """The end of version `version` of one context."""

    context_id: int
    version: int
    tick: int
    last_seq: int  # the last event seq that exists at this point
    record_cutoff: int | None  # records with id < this existed (None: all of them)
    present: bool

    def params(self) -> dict[str, Any]:
        """The point as SQL parameters: ctx, v (version), tick, seq (last event), rec."""
        return {
            "ctx": self.context_id,
            "v": self.version,
            "tick": self.tick,
            "seq": self.last_seq,
            "rec": self.record_cutoff if self.record_cutoff is not None else 2**62,
        }


def parse_version(value: Any, field: str = "as_of") -> int:
    """A version number from a query parameter or a body field."""
    if isinstance(value, bool):
        raise InvalidRequest(f"{field} must be a version number", code=ErrorCode.INVALID_VERSION)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidField(field, f"{field} must be a version number; got {value!r}") from None
    return number


def resolve_point(context: Context, version: Any, field: str = "as_of") -> Point:
    """The point at the end of `version`; InvalidRequest (`invalid_version`) when the context
    never had that version. Reads the context row as given (the caller decides locking)."""
    number = parse_version(version, field)
    if not 0 <= number <= context.version:
        raise InvalidField(
            field,
            f"{field} must be a version from 0 to {context.version} (the present); got {number}",
            min=0,
            max=context.version,
        )
    if number == context.version:
        return Point(context.pk, number, context.tick, context.last_seq, None, True)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT e.seq, t.id, (SELECT coalesce(max(v.tick), 0) FROM memory_evaluation v "
            "  WHERE v.context_id = %s AND v.view_version <= %s) "
            "FROM memory_transactionrecord t JOIN memory_event e ON e.id = t.event_id "
            "WHERE t.context_id = %s AND t.committed_version = %s",
            [context.pk, number, context.pk, number + 1],
        )
        row = cur.fetchone()
    if row is None:  # a commit without its event cannot happen; say so instead of guessing
        raise InvalidRequest(
            f"the history of version {number + 1} is missing", code=ErrorCode.INVALID_VERSION
        )
    return Point(context.pk, number, int(row[2]), int(row[0]) - 1, int(row[1]), False)


# -- as-of SQL ---------------------------------------------------------------------------
# Each selects, for the point in %(ctx)s / %(v)s / %(seq)s, rows shaped like the stored table.

FRAMES_AT = """
SELECT f.id, f.context_id, f.frame_id, h.revision, rv.body, rv.sources, h.status, h.protected,
       h.retire_requested_tick, h.retire_due_tick, h.retire_reason, h.retire_generation,
       h.token_estimate, f.created_version, h.version AS changed_version, f.updated_at
FROM memory_frame f
JOIN (
  SELECT DISTINCT ON (c.frame_id) c.* FROM memory_framechange c
  WHERE c.context_id = %(ctx)s AND c.version <= %(v)s
  ORDER BY c.frame_id, c.version DESC, c.id DESC
) h ON h.frame_id = f.id
JOIN memory_framerevision rv ON rv.frame_id = f.id AND rv.revision = h.revision
WHERE f.context_id = %(ctx)s AND f.created_version <= %(v)s
"""

# One frame by id: index lookups only (the as-of read the benchmark measures).
# Frames as they were at the end of version %(v)s: each frame's last change up to then and
# the revision it named (FRAME_COLUMNS, in order). Callers add their WHERE clause.
FRAMES_AT_SELECT = """
SELECT f.id, f.context_id, f.frame_id, h.revision, rv.body, rv.sources, h.status, h.protected,
       h.retire_requested_tick, h.retire_due_tick, h.retire_reason, h.retire_generation,
       h.token_estimate, f.created_version, h.version AS changed_version, f.updated_at
FROM memory_frame f
CROSS JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(v)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) h
JOIN memory_framerevision rv ON rv.frame_id = f.id AND rv.revision = h.revision
"""
FRAME_AT = (
    FRAMES_AT_SELECT
    + "WHERE f.context_id = %(ctx)s AND f.frame_id = %(fid)s AND f.created_version <= %(v)s\n"
)

FRAME_COLUMNS = (
    "id",
    "context_id",
    "frame_id",
    *FRAME_STATE_COLUMNS,
    "created_version",
    "changed_version",
    "updated_at",
)

EVENTS_AT = """
SELECT e.id, e.context_id, e.seq, e.kind, e.thread, e.content, e.payload, e.created_at,
       e.idempotency_key, e.size_chars, e.token_estimate, e.is_observation,
       coalesce(h.active, e.is_observation) AS active,
       coalesce(h.version, 0) AS status_version,
       (e.pending OR (ev.id IS NOT NULL AND ev.view_version > %(v)s)) AS pending,
       CASE WHEN ev.view_version <= %(v)s THEN e.evaluation_id END AS evaluation_id,
       e.delivers,
       CASE WHEN e.delivered_by_seq > %(seq)s THEN 'open' ELSE e.request_state END
         AS request_state,
       CASE WHEN e.delivered_by_seq > %(seq)s THEN NULL ELSE e.delivered_by_seq END
         AS delivered_by_seq
FROM memory_event e
LEFT JOIN (
  SELECT DISTINCT ON (c.event_id) c.event_id, c.active, c.version FROM memory_eventchange c
  WHERE c.context_id = %(ctx)s AND c.version <= %(v)s
  ORDER BY c.event_id, c.version DESC, c.id DESC
) h ON h.event_id = e.id
LEFT JOIN memory_evaluation ev ON ev.id = e.evaluation_id
WHERE e.context_id = %(ctx)s AND e.seq <= %(seq)s
"""

EVENT_COLUMNS = (
    "id",
    "context_id",
    "seq",
    "kind",
    "thread",
    "content",
    "payload",
    "created_at",
    "idempotency_key",
    "size_chars",
    "token_estimate",
    "is_observation",
    "active",
    "status_version",
    "pending",
    "evaluation_id",
    "delivers",
    "request_state",
    "delivered_by_seq",
)

RELATIONS_AT = """
SELECT r.id, r.context_id, r.subject_id, r.name, r.object_id, r.created_version,
       CASE WHEN r.removed_version <= %(v)s THEN r.removed_version END AS removed_version
FROM memory_relation r
WHERE r.context_id = %(ctx)s AND r.created_version <= %(v)s
"""

RELATION_COLUMNS = (
    "id",
    "context_id",
    "subject_id",
    "name",
    "object_id",
    "created_version",
    "removed_version",
)

CONTEXT_AT = f"""
SELECT c.id, c.slug, c.name, %(v)s AS version, %(tick)s AS tick, %(seq)s AS last_seq,
       coalesce((st.s->>'grace_ticks')::int, c.grace_ticks) AS grace_ticks,
       coalesce((st.s->>'capacity_tokens')::int, c.capacity_tokens) AS capacity_tokens,
       coalesce((st.s->>'pressure_percent')::int, c.pressure_percent) AS pressure_percent,
       coalesce((st.s->>'maintenance_percent')::int, c.maintenance_percent)
         AS maintenance_percent,
       coalesce((st.s->>'maintenance_exit_percent')::int, c.maintenance_exit_percent)
         AS maintenance_exit_percent,
       (SELECT coalesce(sum(f.token_estimate), 0) FROM ({FRAMES_AT}) f
        WHERE f.status IN ('active', 'retiring'))
       + (SELECT coalesce(sum(e.token_estimate), 0) FROM ({EVENTS_AT}) e WHERE e.active)
         AS used_tokens,
       coalesce((SELECT m.in_maintenance FROM memory_maintenancechange m
                 WHERE m.context_id = c.id AND m.last_seq <= %(seq)s
                 ORDER BY m.id DESC LIMIT 1), false) AS in_maintenance,
       c.created_at, c.frozen, c.forked_from_id, c.forked_version, c.forked_tick,
       coalesce((st.s->>'observation_budget_tokens')::int, c.observation_budget_tokens)
         AS observation_budget_tokens
FROM memory_context c
LEFT JOIN LATERAL (
  SELECT g.settings AS s FROM memory_settingschange g
  WHERE g.context_id = c.id AND g.version <= %(v)s ORDER BY g.version DESC, g.id DESC LIMIT 1
) st ON true
WHERE c.id = %(ctx)s
"""  # noqa: S608 - constant SQL fragments; values are parameters

CONTEXT_COLUMNS = (
    "id",
    "slug",
    "name",
    "version",
    "tick",
    "last_seq",
    "grace_ticks",
    "capacity_tokens",
    "pressure_percent",
    "maintenance_percent",
    "maintenance_exit_percent",
    "used_tokens",
    "in_maintenance",
    "created_at",
    "frozen",
    "forked_from_id",
    "forked_version",
    "forked_tick",
    "observation_budget_tokens",
)
