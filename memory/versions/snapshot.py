"""The comparable state of a context, and the comparison replay and import make (R51).

How it works: docs/internals.md, section `memory/versions/snapshot.py`."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection

from memory.contexts import settings_of
from memory.models import Context, Evaluation, TransactionRecord


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


_FRAME_KEYS = (
    "revision",
    "body",
    "sources",
    "status",
    "protected",
    "retire_requested_tick",
    "retire_due_tick",
    "retire_reason",
    "retire_generation",
    "tokens",
    "created_version",
    "changed_version",
)


def _frames(context_id: int) -> dict[str, Any]:
    """Frames by frame id, each with its revisions and retirement requests."""
    frames: dict[str, Any] = {}
    by_pk: dict[int, dict[str, Any]] = {}
    for pk, frame_id, *values in _rows(
        "SELECT id, frame_id, revision, body::text, sources::text, status, protected, "
        "retire_requested_tick, retire_due_tick, retire_reason, retire_generation, "
        "token_estimate, created_version, changed_version FROM memory_frame "
        "WHERE context_id = %s ORDER BY frame_id",
        [context_id],
    ):
        frame = dict(zip(_FRAME_KEYS, values, strict=True))
        frame["body"] = _json(frame["body"])
        frame["sources"] = _json(frame["sources"])
        frame["revisions"] = []
        frame["retirements"] = []
        frames[frame_id] = by_pk[pk] = frame
    for frame_pk, revision, body, sources, version in _rows(
        "SELECT r.frame_id, r.revision, r.body::text, r.sources::text, r.version "
        "FROM memory_framerevision r JOIN memory_frame f ON f.id = r.frame_id "
        "WHERE f.context_id = %s ORDER BY r.frame_id, r.revision",
        [context_id],
    ):
        by_pk[frame_pk]["revisions"].append([revision, _json(body), _json(sources), version])
    for row in _rows(
        "SELECT q.frame_id, q.generation, q.requested_tick, q.due_tick, q.reason, "
        "q.requested_version, q.outcome, q.resolved_tick, q.resolved_version "
        "FROM memory_retirementrequest q JOIN memory_frame f ON f.id = q.frame_id "
        "WHERE f.context_id = %s ORDER BY q.frame_id, q.generation",
        [context_id],
    ):
        by_pk[row[0]]["retirements"].append(list(row[1:]))
    return frames


def _relations(context_id: int) -> list[list[Any]]:
    return [
        list(row)
        for row in _rows(
            "SELECT s.frame_id, r.name, o.frame_id, r.created_version, r.removed_version "
            "FROM memory_relation r JOIN memory_frame s ON s.id = r.subject_id "
            "JOIN memory_frame o ON o.id = r.object_id WHERE r.context_id = %s "
            "ORDER BY s.frame_id, r.name, o.frame_id, r.created_version",
            [context_id],
        )
    ]


def _evaluations(context_id: int) -> tuple[dict[int, int], list[list[Any]]]:
    """Evaluation ordinals by id, and each evaluation's thread, continuation flag, tick,
    whether it advanced the tick, view version, claims and expiries."""
    rows = list(
        Evaluation.objects.filter(context_id=context_id)
        .order_by("pk")
        .values_list(
            "pk",
            "thread",
            "continuation",
            "tick",
            "advanced_tick",
            "view_version",
            "claimed_seqs",
            "result",
        )
    )
    ordinal = {row[0]: n for n, row in enumerate(rows)}
    return ordinal, [
        [thread, cont, tick, adv, view, list(claimed), (result or {}).get("expired")]
        for _pk, thread, cont, tick, adv, view, claimed, result in rows
    ]


def _events(context_id: int, ordinal: dict[int, int]) -> dict[str, list[Any]]:
    events: dict[str, list[Any]] = {}
    for row in _rows(
        "SELECT seq, kind, thread, md5(content), active, status_version, pending, "
        "request_state, delivered_by_seq, delivers, evaluation_id, token_estimate "
        "FROM memory_event WHERE context_id = %s ORDER BY seq",
        [context_id],
    ):
        evaluation = ordinal.get(row[10]) if row[10] is not None else None
        events[str(row[0])] = [*row[1:9], list(row[9]), evaluation, row[11]]
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
    return [
        list(row)
        for row in _rows(
            "SELECT version, last_seq, in_maintenance FROM memory_maintenancechange "
            "WHERE context_id = %s ORDER BY id",
            [context_id],
        )
    ]


def _settings(context_id: int) -> list[list[Any]]:
    """The settings log: kind, version, place (last seq, evaluations before) and settings."""
    return [
        [kind, version, last_seq, evaluations, _json(settings)]
        for kind, version, last_seq, evaluations, settings in _rows(
            "SELECT kind, version, last_seq, evaluations, settings::text "
            "FROM memory_settingschange WHERE context_id = %s ORDER BY id",
            [context_id],
        )
    ]


def snapshot(context_id: int) -> dict[str, Any]:
    """The comparable state of a context (JSON-able; no ids, no clock times)."""
    ctx = Context.objects.get(pk=context_id)
    ordinal, evaluations = _evaluations(context_id)
    state = {
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
    return json.loads(json.dumps(state, ensure_ascii=False, default=str))


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
