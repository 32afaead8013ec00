"""What changed between two points (R52): `diff(context, from_version, to_version=None)`.

How it works: docs/internals.md, section `memory/versions/diff.py`."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from memory.errors import InvalidField
from memory.models import Context
from memory.shapes.versions import Changes, DiffJson, DiffTransaction
from memory.versions.points import Point, resolve_point

PREVIEW_CHARS = 120

_FRAME_STATES = """
WITH touched AS (
  SELECT DISTINCT c.frame_id FROM memory_framechange c
  WHERE c.context_id = %(ctx)s AND c.version > %(a)s AND c.version <= %(b)s
)
SELECT f.frame_id, f.created_version,
       ha.revision, ha.status, ha.protected, ra.body,
       hb.revision, hb.status, hb.protected, rb.body, hb.retire_due_tick
FROM touched t JOIN memory_frame f ON f.id = t.frame_id
LEFT JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(a)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) ha ON true
LEFT JOIN memory_framerevision ra ON ra.frame_id = f.id AND ra.revision = ha.revision
CROSS JOIN LATERAL (
  SELECT c.* FROM memory_framechange c WHERE c.frame_id = f.id AND c.version <= %(b)s
  ORDER BY c.version DESC, c.id DESC LIMIT 1
) hb
JOIN memory_framerevision rb ON rb.frame_id = f.id AND rb.revision = hb.revision
ORDER BY f.frame_id
"""

_RELATIONS = """
SELECT s.frame_id, r.name, o.frame_id, r.created_version, r.removed_version
FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id
JOIN memory_frame o ON o.id = r.object_id
WHERE r.context_id = %(ctx)s AND (
  (r.created_version > %(a)s AND r.created_version <= %(b)s)
  OR (r.removed_version > %(a)s AND r.removed_version <= %(b)s))
ORDER BY r.id
"""

_APPENDED = """
SELECT e.seq, e.kind, e.thread, left(e.content, %(preview)s)
FROM memory_event e WHERE e.context_id = %(ctx)s AND e.seq > %(sa)s AND e.seq <= %(sb)s
ORDER BY e.seq
"""

_EVENT_STATES = """
WITH touched AS (
  SELECT DISTINCT c.event_id FROM memory_eventchange c
  WHERE c.context_id = %(ctx)s AND c.version > %(a)s AND c.version <= %(b)s
)
SELECT e.seq,
       CASE WHEN e.seq > %(sa)s THEN true ELSE coalesce(
         (SELECT c.active FROM memory_eventchange c WHERE c.event_id = e.id
          AND c.version <= %(a)s ORDER BY c.version DESC, c.id DESC LIMIT 1), true) END,
       coalesce((SELECT c.active FROM memory_eventchange c WHERE c.event_id = e.id
          AND c.version <= %(b)s ORDER BY c.version DESC, c.id DESC LIMIT 1), true)
FROM touched t JOIN memory_event e ON e.id = t.event_id
WHERE e.seq <= %(sb)s
ORDER BY e.seq
"""

_TRANSACTIONS = """
SELECT t.committed_version, t.id, e.seq, t.reason, t.author, t.author_kind, t.thread,
       t.base_version, t.text
FROM memory_transactionrecord t LEFT JOIN memory_event e ON e.id = t.event_id
WHERE t.context_id = %(ctx)s AND t.committed_version > %(a)s AND t.committed_version <= %(b)s
ORDER BY t.committed_version
"""


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _rows(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def diff(context: Context, from_version: Any, to_version: Any = None) -> DiffJson:
    """What changed between the end of version `from_version` and the end of `to_version`
    (default: now) (R52): frames derived, revised (both bodies), retired, restored,
    protected; relations added and removed; events appended and retired; the transactions
    in between with their reasons. InvalidRequest `invalid_version` for a version the
    context never had or `from` after `to`. No lock."""
    a = resolve_point(context, from_version, "from")
    b = resolve_point(context, context.version if to_version is None else to_version, "to")
    if a.version > b.version:
        raise InvalidField("from", f"from ({a.version}) must not be after to ({b.version})")
    return _diff(a, b)


def _diff(a: Point, b: Point) -> DiffJson:
    params = {
        "ctx": a.context_id,
        "a": a.version,
        "b": b.version,
        "sa": a.last_seq,
        "sb": b.last_seq,
        "preview": PREVIEW_CHARS,
    }
    return {
        "from_version": a.version,
        "to_version": b.version,
        "from_tick": a.tick,
        "to_tick": b.tick,
        "frames": _frame_changes(a, params),
        "relations": _relation_changes(a, b, params),
        "events": _event_changes(params),
        "transactions": _transactions(params),
    }


def _frame_changes(a: Point, params: dict[str, Any]) -> Changes:
    frames: Changes = {
        "derived": [],
        "revised": [],
        "retiring": [],
        "retired": [],
        "restored": [],
        "protected": [],
        "unprotected": [],
    }
    for row in _rows(_FRAME_STATES, params):
        fid, created, rev_a, status_a, prot_a, body_a = row[:6]
        rev_b, status_b, prot_b, body_b, due_b = row[6:]
        existed = created <= a.version and rev_a is not None
        if not existed:
            frames["derived"].append(
                {"id": fid, "revision": rev_b, "status": status_b, "body": _loads(body_b)}
            )
            status_a, prot_a = None, False
        elif rev_b != rev_a:
            frames["revised"].append(
                {
                    "id": fid,
                    "from_revision": rev_a,
                    "to_revision": rev_b,
                    "before": _loads(body_a),
                    "after": _loads(body_b),
                }
            )
        if status_b != status_a:
            change: dict[str, Any] = {"id": fid, "before": status_a, "after": status_b}
            if status_b == "retiring":
                frames["retiring"].append({**change, "due_tick": due_b})
            elif status_b == "retired":
                frames["retired"].append(change)
            elif existed:
                frames["restored"].append(change)
        if prot_b and not prot_a:
            frames["protected"].append({"id": fid})
        elif prot_a and not prot_b:
            frames["unprotected"].append({"id": fid})
    return frames


def _relation_changes(a: Point, b: Point, params: dict[str, Any]) -> Changes:
    relations: Changes = {"added": [], "removed": []}
    for subject, name, obj, created, removed in _rows(_RELATIONS, params):
        live_a = created <= a.version and (removed is None or removed > a.version)
        live_b = created <= b.version and (removed is None or removed > b.version)
        if live_b and not live_a:
            relations["added"].append(
                {"subject": subject, "name": name, "object": obj, "version": created}
            )
        elif live_a and not live_b:
            relations["removed"].append(
                {"subject": subject, "name": name, "object": obj, "version": removed}
            )
    return relations


def _event_changes(params: dict[str, Any]) -> Changes:
    events: Changes = {
        "appended": [
            {"ref": f"@e{seq}", "kind": kind, "thread": thread, "preview": preview}
            for seq, kind, thread, preview in _rows(_APPENDED, params)
        ],
        "retired": [],
        "restored": [],
    }
    for seq, active_a, active_b in _rows(_EVENT_STATES, params):
        if active_a and not active_b:
            events["retired"].append({"ref": f"@e{seq}"})
        elif active_b and not active_a:
            events["restored"].append({"ref": f"@e{seq}"})
    return events


def _transactions(params: dict[str, Any]) -> list[DiffTransaction]:
    return [
        {
            "version": version,
            "id": pk,
            "ref": f"@e{seq}" if seq is not None else None,
            "reason": reason,
            "author": author,
            "author_kind": author_kind,
            "thread": thread,
            "base_version": base,
            "text": text,
        }
        for version, pk, seq, reason, author, author_kind, thread, base, text in _rows(
            _TRANSACTIONS, params
        )
    ]
