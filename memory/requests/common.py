"""Fields many requests share, declared once: thread, keys, versions, cursors, page sizes.

Each returns the field's default, bounds and description; its type is declared where the
field is (`thread: ThreadName | None = thread()`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memory.idempotency import KEY_HELP
from memory.limits import CURSOR_MAX_CHARS
from memory.read.paging import CURSOR_HELP
from memory.requests.strict import QueryInt
from memory.vocabulary import MAX_SEQ

THREAD_HELP = "execution thread (R8): 1-100 of letters, digits, '.', '_', ':', '-'; "
MIN_VERSION_HELP = (
    "read-your-writes with replicas (R68): answer from a state that holds at least this "
    "version (the caller's last commit or evaluation); also the Morphz-Min-Version header"
)
AS_OF_HELP = "answer as of the end of this version (R52), from the history"


def thread(*, filter: bool = False) -> Any:
    """The thread a write goes to (default `main`), or with `filter` the thread a listing or
    search keeps (default: every thread)."""
    where = "only this thread; default: every thread" if filter else "default `main`"
    return Field(None, description=THREAD_HELP + where)


def key(description: str = KEY_HELP) -> Any:
    """An optional idempotency key (its rule: `memory.idempotency.Key`)."""
    return Field(None, description=description)


def evaluation(what: str) -> Any:
    """An optional evaluation id, `what` saying which."""
    return Field(None, ge=1, le=MAX_SEQ, description=f"id of {what}")


def limit(default: int, maximum: int) -> Any:
    """A page size, 1-`maximum`."""
    return Field(default, ge=1, le=maximum, description="page size")


def as_of() -> Any:
    """The version a read answers as of (R52); default: now."""
    return Field(None, ge=0, le=MAX_SEQ, description=AS_OF_HELP)


def min_version() -> Any:
    """The read-your-writes floor (R68)."""
    return Field(None, ge=0, le=MAX_SEQ, description=MIN_VERSION_HELP)


def cursor() -> Any:
    """A list's cursor: the previous page's `next_cursor`."""
    return Field(None, min_length=1, max_length=CURSOR_MAX_CHARS, description=CURSOR_HELP)


QInt = Annotated[int, QueryInt]
