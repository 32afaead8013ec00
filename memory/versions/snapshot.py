"""The comparable state of a context, and the comparison replay and import make (R51).

How it works: docs/internals.md, section `memory/versions/snapshot.py`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from django.db import connection

from memory.contexts import settings_of
from memory.models import Context, TransactionRecord
from memory.shapes.exports import Snapshot, SnapshotFrame
from memory.sql import named_rows, statements
from memory.versions.steps import ordered_evaluations


def _rows(name: str, context_id: int) -> Sequence[Mapping[str, Any]]:
    """The rows of the snapshot statement `name` (memory/versions/queries.sql), by name."""
    with connection.cursor() as cur:
        cur.execute(statements("memory.versions")[name], [context_id])
        return named_rows(cur)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _frame(row: Mapping[str, Any]) -> SnapshotFrame:
    """A frame's comparable state: its stored columns but ids (the estimate as `tokens`)."""
    return {
        "revision": row["revision"],
        "body": _json(row["body"]),
        "sources": _json(row["sources"]),
        "status": row["status"],
        "protected": row["protected"],
        "retire_requested_tick": row["retire_requested_tick"],
        "retire_due_tick": row["retire_due_tick"],
        "retire_reason": row["retire_reason"],
        "retire_generation": row["retire_generation"],
        "tokens": row["token_estimate"],
        "created_version": row["created_version"],
        "changed_version": row["changed_version"],
        "revisions": [],
        "retirements": [],
    }


def _frames(context_id: int) -> dict[str, SnapshotFrame]:
    """Frames by frame id, each with its revisions and retirement requests."""
    frames: dict[str, SnapshotFrame] = {}
    by_pk: dict[int, SnapshotFrame] = {}
    for row in _rows("snapshot_frames", context_id):
        frames[row["frame_id"]] = by_pk[row["id"]] = _frame(row)
    for row in _rows("snapshot_revisions", context_id):
        by_pk[row["frame_id"]]["revisions"].append(
            [row["revision"], _json(row["body"]), _json(row["sources"]), row["version"]]
        )
    for row in _rows("snapshot_retirements", context_id):
        by_pk[row["frame_id"]]["retirements"].append(
            [value for key, value in row.items() if key != "frame_id"]
        )
    return frames


def _relations(context_id: int) -> list[list[Any]]:
    return [list(row.values()) for row in _rows("snapshot_relations", context_id)]


def _evaluations(context_id: int) -> tuple[dict[int, int], list[list[Any]]]:
    """Evaluation ordinals by id, and each evaluation's thread, continuation flag, tick,
    whether it advanced the tick, view version, claims and expiries."""
    evaluations = ordered_evaluations(context_id, "advanced_tick", "result")
    ordinal = {e.pk: n for n, e in enumerate(evaluations)}
    return ordinal, [
        [
            *(e.thread, e.continuation, e.tick, e.advanced_tick, e.view_version),
            list(e.claimed_seqs),
            (e.result or {}).get("expired"),
        ]
        for e in evaluations
    ]


def _events(context_id: int, ordinal: dict[int, int]) -> dict[str, list[Any]]:
    events: dict[str, list[Any]] = {}
    for row in _rows("snapshot_events", context_id):
        evaluation = row["evaluation_id"]
        events[str(row["seq"])] = [
            *[row[k] for k in ("kind", "thread", "content_md5", "active", "status_version")],
            *[row[k] for k in ("pending", "request_state", "delivered_by_seq")],
            list(row["delivers"]),
            ordinal.get(evaluation) if evaluation is not None else None,
            row["token_estimate"],
        ]
    return events


def _transactions(context_id: int, ordinal: dict[int, int]) -> list[list[Any]]:
    rows = (
        TransactionRecord.objects.filter(context_id=context_id, status="committed")
        .order_by("committed_version")
        .values_list(
            "committed_version",
            "base_version",
            "text",
            "thread",
            "author",
            "author_kind",
            "reason",
            "receipt",
            "evaluation_id",
        )
    )
    return [[*row[:8], ordinal.get(row[8]) if row[8] is not None else None] for row in rows]


def _maintenance(context_id: int) -> list[list[Any]]:
    """The maintenance log (as-of reads take the flag from it): version, last seq, flag."""
    return [list(row.values()) for row in _rows("snapshot_maintenance", context_id)]


def _settings(context_id: int) -> list[list[Any]]:
    """The settings log: kind, version, place (last seq, evaluations before) and settings."""
    return [
        [*list(row.values())[:4], _json(row["settings"])]
        for row in _rows("snapshot_settings", context_id)
    ]


def snapshot(context_id: int) -> Snapshot:
    """The comparable state of a context (JSON-able; no ids, no clock times)."""
    ctx = Context.objects.get(pk=context_id)
    ordinal, evaluations = _evaluations(context_id)
    state: Snapshot = {
        "counters": {
            "version": ctx.version,
            "tick": ctx.tick,
            "last_seq": ctx.last_seq,
            "used_tokens": ctx.used_tokens,
            "in_maintenance": ctx.in_maintenance,
        },
        "frames": _frames(context_id),
        "relations": _relations(context_id),
        "events": _events(context_id, ordinal),
        "evaluations": evaluations,
        "transactions": _transactions(context_id, ordinal),
        "maintenance": _maintenance(context_id),
        "settings": {"now": settings_of(ctx), "log": _settings(context_id)},
    }
    return cast(Snapshot, json.loads(json.dumps(state, ensure_ascii=False, default=str)))


def compare(expected: Any, actual: Any, path: str = "", limit: int = 200) -> list[str]:
    """Every difference, as `path: stored X, replayed Y` (at most `limit`)."""
    out: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                here = f"{where}.{key}" if where else str(key)
                if key not in b:
                    out.append(f"{here}: stored {_short(a[key])}, missing after replay")
                elif key not in a:
                    out.append(f"{here}: not stored, replay has {_short(b[key])}")
                else:
                    walk(a[key], b[key], here)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif a != b:
            out.append(f"{where}: stored {_short(a)}, replayed {_short(b)}")

    walk(expected, actual, path)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 160 else text[:157] + "..."
