"""A submitted transaction before it meets its context: its JSON form (from the text form
or the JSON form, docs/transactions.md), its thread and its canonical text, each checked
against the rules that need no state (the operation count, one thread, the size limit)."""

from __future__ import annotations

from typing import Any

from memory.errors import ErrorCode, InvalidField, InvalidRequest, ParseError
from memory.limits import MAX_CONTENT_CHARS, MAX_OPS
from memory.timeline.events import check_thread
from memory.tx import lang as txlang


def parse_submission(*, text: str | None = None, data: Any = None) -> dict[str, Any]:
    """The JSON form of a submitted transaction, from its text or its JSON form."""
    if (text is None) == (data is None):
        raise InvalidRequest(
            "send either `text` (the S-expression form) or the JSON form, not both"
        )
    if text is not None:
        try:
            return txlang.parse_text(text)
        except txlang.TxParseError as exc:
            raise ParseError(
                str(exc),
                details=[{"line": exc.line, "column": exc.column, "expected": exc.expected}],
            ) from None
    try:
        return txlang.validate_json(data)
    except txlang.TxValidationError as exc:
        raise InvalidRequest(str(exc), details=[{"field": exc.path}]) from None


def one_thread(given: str | None, declared: str | None) -> str:
    """The transaction's thread: `thread` as given beside it, or as its text (or JSON form)
    declares it; InvalidRequest `invalid_thread` when both are there and differ (the record
    would contradict its own text)."""
    if given is not None and declared is not None and given != declared:
        raise InvalidField(
            "thread",
            f"thread {given!r} differs from the transaction's own (thread {declared}); "
            "give it in one place",
        )
    return check_thread(given or declared)


def thread_and_text(
    tx: dict[str, Any], given: str | None, *, replaying: bool = False
) -> tuple[str, str]:
    """(thread, canonical text) of a parsed transaction: at most MAX_OPS operations, one
    thread (`one_thread`), and a text within MAX_CONTENT_CHARS, since it becomes the
    transaction event's content: the JSON form meets the limit the text form meets, as each
    converts to the other exactly (InvalidRequest `too_large`). `replaying` (history being
    rebuilt, admitted when it was written, by a version that may not have had these two
    rules): the stored thread is taken as it is and the size is not checked again."""
    if len(tx["ops"]) > MAX_OPS:
        raise InvalidRequest(f"a transaction may hold at most {MAX_OPS} operations")
    if replaying:
        return check_thread(given or tx.get("thread")), txlang.canonical_text(tx)
    thread = one_thread(given, tx.get("thread"))
    canonical = txlang.canonical_text(tx)
    if len(canonical) > MAX_CONTENT_CHARS:
        raise InvalidRequest(
            f"the transaction's text would be {len(canonical)} characters, over the limit "
            f"of {MAX_CONTENT_CHARS}; send large content as an event and cite it",
            code=ErrorCode.TOO_LARGE,
        )
    return thread, canonical
