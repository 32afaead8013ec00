"""The names Morphz's references are made of: event refs, frame ids, relation names, threads.

How it works: docs/internals.md, section `memory/vocabulary.py`."""

from __future__ import annotations

import re
from typing import Final

FRAME_ID_MAX: Final = 128
RELATION_NAME_MAX: Final = 64
THREAD_MAX: Final = 100
SLUG_MAX: Final = 64  # a context slug (memory.models.Context.slug)
MAX_SEQ: Final = 2**63 - 1
MAIN_THREAD: Final = "main"

# The repeat counts are the maxima above minus the first character; a test checks them.
FRAME_ID_RE: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
RELATION_NAME_RE: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
EVENT_REF_RE: Final = re.compile(r"@e([1-9][0-9]{0,17})")
THREAD_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")
_SEQ_RE: Final = re.compile(r"[1-9][0-9]{0,17}")


def is_frame_id(value: object) -> bool:
    """1-128 of `a-z 0-9 . _ -`, starting with a letter or digit."""
    return isinstance(value, str) and FRAME_ID_RE.fullmatch(value) is not None


def is_relation_name(value: object) -> bool:
    """1-64 of `a-z 0-9 . _ -`, starting with a letter or digit."""
    return isinstance(value, str) and RELATION_NAME_RE.fullmatch(value) is not None


def is_event_ref(value: object) -> bool:
    """`@e` and a sequence number: ASCII digits, no leading zero, at most 18."""
    return isinstance(value, str) and EVENT_REF_RE.fullmatch(value) is not None


def is_ref(value: object) -> bool:
    """A stable reference: an event ref (``@e42``) or a frame id."""
    return is_event_ref(value) or is_frame_id(value)


def is_thread_name(value: object) -> bool:
    """1-100 of `A-Z a-z 0-9 . _ : -`, starting with a letter or digit."""
    return isinstance(value, str) and THREAD_RE.fullmatch(value) is not None


def event_ref(seq: int) -> str:
    """The model-facing ref of an event: ``event_ref(42) == "@e42"``."""
    return f"@e{seq}"


# An event ref's shape with any number of digits: one longer than EVENT_REF_RE allows is
# told it is past the largest ref, not that it is no ref.
_LONG_EVENT_REF_RE: Final = re.compile(r"@e[1-9][0-9]*")


def not_an_event_ref(value: object, example: str = "@e42") -> str:
    """Why `value` is no event ref, as a message: past the largest (`@e` and at most 18
    digits) when it has the shape, else not one like `example`."""
    if isinstance(value, str) and _LONG_EVENT_REF_RE.fullmatch(value):
        return f"{value[:40]!r} is past the largest event reference (@e and at most 18 digits)"
    return f'{value!r} is not an event reference like "{example}"'


def seq_of(ref: object) -> int | None:
    """The sequence number of an event ref (``seq_of("@e42") == 42``), None for anything else."""
    match = EVENT_REF_RE.fullmatch(ref) if isinstance(ref, str) else None
    return int(match.group(1)) if match else None


def event_seq(ref: str) -> int:
    """The sequence number of an event ref; ValueError when `ref` is not one."""
    seq = seq_of(ref)
    if seq is None:
        raise ValueError(f"not an event ref: {ref!r}")
    return seq


def seq_from_text(value: object) -> int | None:
    """A sequence number written as ``@e42`` or ``42`` (ASCII digits, no sign, no leading zero)."""
    if isinstance(value, str) and _SEQ_RE.fullmatch(value):
        return int(value)
    return seq_of(value)
