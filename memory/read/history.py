"""Reading the history: events in chunks (R31) and a frame's write history (R32).

How it works: docs/internals.md, section `memory/read/history.py`."""

from __future__ import annotations

from typing import Any

from django.db.models.functions import Length, Substr

from memory.erasure.lines import tombstone_json
from memory.errors import ErrorCode, InvalidField, InvalidRequest, NotFound
from memory.limits import CHUNK_DEFAULT, CHUNK_MAX
from memory.models import Context, Erasure, Event, Frame, FrameRevision
from memory.shapes import EVENT_ROW_COLUMNS, EventChunk, event_chunk_json
from memory.shapes.history import WriteEntry
from memory.vocabulary import event_ref, is_frame_id, is_ref, not_an_event_ref, seq_from_text


def resolve_context(context: Context | int) -> Context:
    """The Context itself, or the one with this primary key; NotFound when there is none.
    The functions here take either (views hold the object)."""
    if isinstance(context, Context):
        return context
    found = Context.objects.filter(pk=context).first()
    if found is None:
        raise NotFound(f"context {context} does not exist")
    return found


def parse_seq(seq: int | str) -> int:
    """A sequence number from `42`, `"42"` or `"@e42"`; InvalidRequest (`invalid_ref`) otherwise."""
    if isinstance(seq, bool):
        raise InvalidRequest(f"{seq!r} is not an event reference", code=ErrorCode.INVALID_REF)
    if isinstance(seq, int):
        if seq < 1:
            raise InvalidRequest(
                f"event seq must be positive; got {seq}", code=ErrorCode.INVALID_REF
            )
        return seq
    number = seq_from_text(seq)
    if number is not None:
        return number
    raise InvalidRequest(not_an_event_ref(seq), code=ErrorCode.INVALID_REF)


def check_ref(value: Any, field: str) -> str:
    """`value` when it is an event ref or a frame id (`memory.vocabulary.is_ref`); else
    InvalidRequest naming `field`: `invalid_ref` when it starts with @ (an event ref's shape:
    `@e0`, `@E1`, `@e+3`), `invalid_frame_id` otherwise."""
    if is_ref(value):
        return str(value)
    if isinstance(value, str) and value.startswith("@"):
        raise InvalidRequest(
            not_an_event_ref(value),
            code=ErrorCode.INVALID_REF,
            details=[{"field": field, "ref": value}],
        )
    raise InvalidRequest(
        f"{field} must be a frame id (1-128 of a-z 0-9 . _ -, starting with a letter or digit) "
        f"or an event ref like @e42; got {value!r}",
        code=ErrorCode.INVALID_FRAME_ID,
        details=[{"field": field}],
    )


def check_frame_id(value: Any, field: str) -> str:
    """`value` when it is a frame id (`memory.vocabulary.is_frame_id`); else InvalidRequest
    `invalid_frame_id` naming `field`: a filter naming no possible frame is a mistake, not
    an empty list."""
    if is_frame_id(value):
        return str(value)
    raise InvalidRequest(
        f"{field} must be a frame id (1-128 of a-z 0-9 . _ -, starting with a letter or digit); "
        f"got {value!r}",
        code=ErrorCode.INVALID_FRAME_ID,
        details=[{"field": field}],
    )


def _check_int(value: Any, name: str, code: ErrorCode, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise InvalidRequest(f"{name} must be an integer", code=code) from None
    if not minimum <= value <= maximum:
        raise InvalidRequest(f"{name} must be between {minimum} and {maximum}", code=code)
    return value


_PAST_ANY_TEXT = 2**30  # characters: more than PostgreSQL's 1 GB text can hold


def read_event_chunk(
    context: Context | int,
    seq: int | str,
    offset: int = 0,
    length: int = CHUNK_DEFAULT,
) -> EventChunk:
    """One slice of an event's text, with its size and status (R31): `offset` and `length`
    in characters (length 1-CHUNK_MAX). NotFound for an unknown event; InvalidRequest
    `invalid_ref`, `invalid_offset` (also past the end), `invalid_length`."""
    ctx = resolve_context(context)
    number = parse_seq(seq)
    offset = _check_int(offset, "offset", ErrorCode.INVALID_OFFSET, 0, 10**12)
    length = _check_int(length, "length", ErrorCode.INVALID_LENGTH, 1, CHUNK_MAX)
    # PostgreSQL's string positions are 32-bit and a text holds under 2**30 characters: a
    # larger offset is past the end whatever the event, and is read (nothing) from there.
    row = (
        Event.objects.filter(context=ctx, seq=number)
        .annotate(
            chunk=Substr("content", min(offset, _PAST_ANY_TEXT) + 1, length),
            total=Length("content"),
        )
        .values(
            *EVENT_ROW_COLUMNS,
            "payload",
            "chunk",
            "total",
        )
        .first()
    )
    if row is None:
        raise NotFound(
            f"event {event_ref(number)} does not exist in this context",
            details=[{"ref": event_ref(number)}],
        )
    total = row["total"]
    if offset > total:
        # Past the end is a client's mistake (a stale or miscounted offset), not an empty read;
        # offset == total is the end itself and reads nothing.
        raise InvalidField(
            "offset",
            f"offset {offset} is past the end of {event_ref(number)} ({total} characters)",
            total=total,
        )
    chunk = event_chunk_json(row, offset, row["chunk"] or "", total)
    # Where the content was, the tombstones say what was erased, when, by whom, why (R64).
    stones = Erasure.objects.filter(context=ctx, ref=event_ref(number)).order_by("pk")
    if stones:
        chunk["erased"] = [tombstone_json(t) for t in stones]
    return chunk


def _write_op(ops: Any, frame_id: str) -> str:
    """Which op wrote this frame in a transaction: the last derive/revise naming it."""
    found = "revise"
    for op in ops or []:
        if (
            isinstance(op, dict)
            and op.get("op") in ("derive", "revise")
            and op.get("id") == frame_id
        ):
            found = op["op"]
    return found


def frame_write_history(context: Context | int, frame_id: str) -> list[WriteEntry]:
    """The transactions that wrote a frame's body, oldest first (R32): per revision
    `{revision, op, version, base_version, transaction_id, event_ref, text, reason, body,
    sources, author, author_kind, thread, created_at}`. NotFound for an unknown frame."""
    ctx = resolve_context(context)
    frame = Frame.objects.filter(context=ctx, frame_id=frame_id).only("pk").first()
    if frame is None:
        raise NotFound(
            f"frame {frame_id!r} does not exist in this context", details=[{"ref": frame_id}]
        )
    revisions = (
        FrameRevision.objects.filter(frame=frame)
        .select_related("transaction", "transaction__event")
        .order_by("revision")
    )
    history: list[WriteEntry] = []
    for rev in revisions:
        tx = rev.transaction
        history.append(
            {
                "revision": rev.revision,
                "op": _write_op(tx.ops, frame_id),
                "version": rev.version,
                "base_version": tx.base_version,
                "transaction_id": tx.pk,
                "event_ref": tx.event.ref if tx.event is not None else None,
                "text": tx.text,
                "reason": tx.reason,
                "body": rev.body,
                "sources": rev.sources,
                "author": tx.author,
                "author_kind": tx.author_kind,
                "thread": tx.thread,
                "created_at": rev.created_at.isoformat(),
            }
        )
    return history
