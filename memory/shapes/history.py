"""The shapes of the past: a frame revision and a submitted transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, NotRequired, TypedDict

from memory.limits import INLINE_CHARS
from memory.models import TransactionRecord
from memory.shapes.fields import Doc, Timestamp


class RevisionJson(TypedDict):
    revision: int
    body: Annotated[Any | None, Doc("null when `body_omitted` (read the revision on its own)")]
    body_omitted: Annotated[
        bool, Doc("the body is longer than the page allows; GET frames/{id}/revisions/{n}/")
    ]
    body_chars: NotRequired[Annotated[int, Doc("size of the body as JSON")]]
    sources: list[str]
    version: Annotated[int, Doc("committed version that wrote it")]
    transaction: int
    created_at: Timestamp


def revision_json(
    revision: int,
    body: Any,
    sources: list[str],
    version: int,
    transaction: int,
    created_at: datetime,
    *,
    omitted: bool = False,
    body_chars: int | None = None,
) -> RevisionJson:
    """One revision of a frame: its number, body (None when `omitted`: too long for a page,
    read on its own), sources, the committed version and transaction that wrote it;
    `body_chars` is the body's size as JSON text, where measured."""
    item: RevisionJson = {
        "revision": revision,
        "body": body,
        "body_omitted": omitted,
        "sources": list(sources),
        "version": version,
        "transaction": transaction,
        "created_at": created_at.isoformat(),
    }
    if body_chars is not None:
        item["body_chars"] = body_chars
    return item


class TransactionJson(TypedDict):
    id: int
    status: Annotated[str, Doc("`committed` or `rejected`")]
    author: str
    author_kind: str
    thread: str
    base_version: int | None
    committed_version: int | None
    reason: str
    text: Annotated[str, Doc(f"cut at {INLINE_CHARS:,} characters in lists")]
    text_truncated: Annotated[
        bool, Doc("the text was cut: read the transaction's event (`ref`) in chunks")
    ]
    ops: Any | None
    ops_omitted: Annotated[bool, Doc(f"ops longer than {INLINE_CHARS:,} characters left out")]
    receipt: Any | None
    errors: Any | None
    frames: list[str]
    evaluation: int | None
    ref: str | None
    created_at: Timestamp


def transaction_json(record: TransactionRecord) -> TransactionJson:
    """A submitted transaction, committed or rejected: author, versions, text and operations
    (cut or left out when memory.read.pages bounded the record: `text_truncated`,
    `ops_omitted`), the receipt or the errors, the frames it touched and its event `ref`."""
    return {
        "id": record.pk,
        "status": record.status,
        "author": record.author,
        "author_kind": record.author_kind,
        "thread": record.thread,
        "base_version": record.base_version,
        "committed_version": record.committed_version,
        "reason": record.reason,
        "text": record.text,
        "text_truncated": getattr(record, "text_truncated", False),
        "ops": record.ops,
        "ops_omitted": getattr(record, "ops_omitted", False),
        "receipt": record.receipt,
        "errors": record.errors,
        "frames": list(record.frame_ids),
        "evaluation": record.evaluation_id,
        "ref": record.event.ref if record.event_id and record.event else None,
        "created_at": record.created_at.isoformat(),
    }


class WriteEntry(TypedDict):
    """One entry of a frame's write history (R32): the revision with the transaction that
    wrote it. The whole history adds `thread` and `created_at`; a bounded page adds the
    sizes and what it left out."""

    revision: int
    op: str  # derive or revise
    version: int
    base_version: int | None
    transaction_id: int
    event_ref: str | None
    text: str
    reason: str
    body: Any
    sources: list[str]
    author: str
    author_kind: str
    thread: NotRequired[str]
    created_at: NotRequired[Timestamp]
    text_truncated: NotRequired[bool]
    text_chars: NotRequired[int]
    body_omitted: NotRequired[bool]
    body_chars: NotRequired[int | None]


class FrameHistoryPage(TypedDict):
    """A page of a frame's past, oldest first; `next_before` pages further back."""

    revisions: list[RevisionJson]
    write_history: list[WriteEntry]
    next_before: int | None
