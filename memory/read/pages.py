"""Bounded reads of a frame's past and of transaction texts.

A frame revised many times with a large body must not turn one GET into hundreds of
megabytes: history comes a page of revisions at a time, and inside a page a body or a
transaction text longer than INLINE_CHARS is left out (`body_omitted`, `text_truncated`)
and read on demand (`revision_detail`, or the transaction's event in chunks, R31). Sizes
are measured in the database, so an omitted body is never loaded to be measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import TextField
from django.db.models.functions import Cast, Left, Length

from memory.errors import ErrorCode, InvalidRequest, NotFound
from memory.limits import HISTORY_PAGE, INLINE_CHARS, MAX_HISTORY_PAGE
from memory.models import Frame, FrameRevision, TransactionRecord
from memory.shapes import RevisionJson, revision_json
from memory.shapes.history import FrameHistoryPage, WriteEntry
from memory.vocabulary import event_ref

# Larger bodies and texts are left out of lists and history pages and read on demand.


def frame_history_page(
    frame: Frame, *, before: int | None = None, limit: int = HISTORY_PAGE
) -> FrameHistoryPage:
    """The newest `limit` revisions below `before` (all when None), oldest first, as
    `revisions` and `write_history` entries; `next_before` pages further back (None at the
    first revision)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HISTORY_PAGE:
        raise InvalidRequest(
            f"history_limit must be between 1 and {MAX_HISTORY_PAGE}",
            code=ErrorCode.INVALID_REQUEST,
        )
    rows = _history_rows(frame, before, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    small = [row["pk"] for row in rows if (row["body_chars"] or 0) <= INLINE_CHARS]
    bodies = dict(FrameRevision.objects.filter(pk__in=small).values_list("pk", "body"))
    revision_entries = []
    history = []
    for row in reversed(rows):
        body = bodies.get(row["pk"])
        entry = revision_json(
            row["revision"],
            body,
            row["sources"],
            row["version"],
            row["transaction_id"],
            row["created_at"],
            omitted=row["pk"] not in bodies,
            body_chars=row["body_chars"],
        )
        revision_entries.append(entry)
        history.append(_write_entry(row, body, entry))
    return {
        "revisions": revision_entries,
        "write_history": history,
        "next_before": rows[-1]["revision"] if more and rows else None,
    }


def _history_rows(frame: Frame, before: int | None, count: int) -> list[Mapping[str, Any]]:
    """The newest `count` revisions below `before`, newest first, with their sizes and the
    heads of their transactions' texts measured and cut in the database."""
    revisions = FrameRevision.objects.filter(frame=frame)
    if before is not None:
        revisions = revisions.filter(revision__lt=before)
    return list(
        revisions.order_by("-revision")
        .annotate(
            body_chars=Length(Cast("body", TextField())),
            text_head=Left("transaction__text", INLINE_CHARS),
            text_chars=Length("transaction__text"),
            reason_head=Left("transaction__reason", INLINE_CHARS),
        )
        .values(
            "pk",
            "revision",
            "sources",
            "version",
            "created_at",
            "transaction_id",
            "body_chars",
            "text_head",
            "text_chars",
            "reason_head",
            "transaction__base_version",
            "transaction__author",
            "transaction__author_kind",
            "transaction__thread",
            "transaction__event__seq",
        )[:count]
    )


def _write_entry(row: Mapping[str, Any], body: Any, revision: RevisionJson) -> WriteEntry:
    """One `write_history` entry: the revision with the transaction that wrote it."""
    seq = row["transaction__event__seq"]
    return {
        "revision": row["revision"],
        "op": "derive" if row["revision"] == 1 else "revise",
        "version": row["version"],
        "base_version": row["transaction__base_version"],
        "transaction_id": row["transaction_id"],
        "event_ref": event_ref(seq) if seq is not None else None,
        "text": row["text_head"],
        "text_truncated": row["text_chars"] > INLINE_CHARS,
        "text_chars": row["text_chars"],
        "reason": row["reason_head"],
        "body": body,
        "body_omitted": revision["body_omitted"],
        "body_chars": revision.get("body_chars"),
        "sources": list(row["sources"]),
        "author": row["transaction__author"],
        "author_kind": row["transaction__author_kind"],
        "thread": row["transaction__thread"],
        "created_at": row["created_at"].isoformat(),
    }


def revision_detail(frame: Frame, revision: int) -> RevisionJson:
    """One revision with its whole body (what a history page left out)."""
    row = (
        FrameRevision.objects.filter(frame=frame, revision=revision)
        .values("revision", "body", "sources", "version", "transaction_id", "created_at")
        .first()
    )
    if row is None:
        raise NotFound(
            f"frame {frame.frame_id!r} has no revision {revision}",
            details=[{"ref": frame.frame_id, "revision": revision}],
        )
    return revision_json(
        row["revision"],
        row["body"],
        row["sources"],
        row["version"],
        row["transaction_id"],
        row["created_at"],
    )


def bounded_transactions(records: list[TransactionRecord]) -> list[TransactionRecord]:
    """Fill in `text` (cut at INLINE_CHARS, `text_truncated`) and `ops` (None and
    `ops_omitted` when larger) on records read by `bounded_transaction_queryset`."""
    small = [r.pk for r in records if (getattr(r, "ops_chars", 0) or 0) <= INLINE_CHARS]
    ops = dict(TransactionRecord.objects.filter(pk__in=small).values_list("pk", "ops"))
    for record in records:
        record.text = record.text_head  # type: ignore[attr-defined]
        record.text_truncated = record.text_chars > INLINE_CHARS  # type: ignore[attr-defined]
        record.ops_omitted = record.pk not in ops  # type: ignore[attr-defined]
        record.ops = ops.get(record.pk)
    return records


def bounded_transaction_queryset(queryset: Any) -> Any:
    """`queryset` of TransactionRecords without loading large texts or operations."""
    return queryset.defer("text", "ops").annotate(
        text_head=Left("text", INLINE_CHARS),
        text_chars=Length("text"),
        ops_chars=Length(Cast("ops", TextField())),
    )
