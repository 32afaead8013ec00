"""What changed between two points (R52): `diff(context, from_version, to_version=None)`.

How it works: docs/internals.md, section `memory/versions/diff.py`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection

from memory.errors import InvalidField
from memory.models import Context
from memory.shapes.versions import Changes, DiffJson, DiffTransaction
from memory.sql import named_rows, statements
from memory.versions.points import Point, resolve_point

PREVIEW_CHARS = 120


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _rows(name: str, params: dict[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The rows of the statement `name` (memory/versions/queries.sql), by column name."""
    with connection.cursor() as cur:
        cur.execute(statements("memory.versions")[name], params)
        return named_rows(cur)


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
    for row in _rows("diff_frames", params):
        fid, rev_a, rev_b = row["frame_id"], row["revision_a"], row["revision_b"]
        status_a, status_b = row["status_a"], row["status_b"]
        prot_a, prot_b = row["protected_a"], row["protected_b"]
        body_a, body_b = row["body_a"], row["body_b"]
        existed = row["created_version"] <= a.version and rev_a is not None
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
                frames["retiring"].append({**change, "due_tick": row["due_tick_b"]})
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
    for row in _rows("diff_relations", params):
        subject, name, obj = row["subject"], row["name"], row["object"]
        created, removed = row["created_version"], row["removed_version"]
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
            {
                "ref": f"@e{r['seq']}",
                "kind": r["kind"],
                "thread": r["thread"],
                "preview": r["preview"],
            }
            for r in _rows("diff_appended", params)
        ],
        "retired": [],
        "restored": [],
    }
    for row in _rows("diff_event_states", params):
        if row["active_a"] and not row["active_b"]:
            events["retired"].append({"ref": f"@e{row['seq']}"})
        elif row["active_b"] and not row["active_a"]:
            events["restored"].append({"ref": f"@e{row['seq']}"})
    return events


def _transactions(params: dict[str, Any]) -> list[DiffTransaction]:
    return [
        {
            "version": row["version"],
            "id": row["id"],
            "ref": f"@e{row['seq']}" if row["seq"] is not None else None,
            "reason": row["reason"],
            "author": row["author"],
            "author_kind": row["author_kind"],
            "thread": row["thread"],
            "base_version": row["base_version"],
            "text": row["text"],
        }
        for row in _rows("diff_transactions", params)
    ]
