"""How many documents the word index reads for a ranking item (`memory.search.ranking`):
whether an item is broad, and so limited to the newest documents, goes by this, since each
document the index finds is a row read and rechecked, whether it matches or not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from django.db import connection

from memory.search import vectors
from memory.search.cursor import Snapshot, refused
from memory.search.statistics import document_counts
from memory.search.textindex import SECONDARY
from memory.sql import named_rows, statements


class Reached(Protocol):
    """A ranking item (`ranking.Item`), as far as its reach goes."""

    literal: str
    lexeme: str  # as the index stores it
    estimate: float
    reach: float


def measure(
    ctx: int,
    items: Sequence[Reached],
    filters: str,
    params: dict[str, Any],
    documents: int,
    windowed: bool,
    snapshot: Snapshot | None,
    broad: int,
    floors: Sequence[float],
) -> list[float] | None:
    """Set each item's `reach` (`index_reaches` with a window; its count without one,
    nothing being limited then; or as a cursor's first page counted). `floors`: documents
    each item's scan is known to read at least (a stem item's: its word's). Returns the
    reaches a cursor keeps (None without a window)."""
    reaches = [item.estimate for item in items]
    if snapshot is not None:
        reaches = list(snapshot.reaches or reaches)
    elif windowed:
        literals = [item.literal for item in items]
        known = [max(pair) for pair in zip(reaches, floors, strict=True)]
        reaches = index_reaches(ctx, literals, known, filters, params, documents, broad)
    if len(reaches) != len(items):
        raise refused("malformed cursor", "malformed")
    for item, found in zip(items, reaches, strict=True):
        item.reach = found
    return reaches if windowed else None


def index_reaches(
    ctx: int,
    literals: list[str],
    estimates: list[float],
    filters: str,
    params: dict[str, Any],
    documents: int,
    broad: int,
) -> list[float]:
    """For each tsquery literal (at least `estimates` documents), the documents the index
    finds for it: its tsquery without its "not" parts, a phrase's words together
    (`index_parts`), counted as `document_counts` counts, up to `broad`; never fewer than
    `estimates`. A stem item's scan finds every document saying the word too, which only
    the recheck leaves out."""
    with connection.cursor() as cursor:
        cursor.execute(statements("memory.search")["index_parts"], {"items": literals})
        parts = [row["part"] for row in named_rows(cursor)]
    # Only an item the index cannot answer exactly reads more than it holds; whether it is
    # broad is all that is asked, so it is counted up to `broad`, and not at all when the
    # item alone holds that many.
    wider = [
        part if part is not None and part != literal and estimate < broad else None
        for part, literal, estimate in zip(parts, literals, estimates, strict=True)
    ]
    asked = [(part, "") for part in wider if part is not None]
    counted = iter(
        document_counts(ctx, asked, filters, params, documents, cap=broad) if asked else []
    )
    return [
        max(estimate, next(counted)) if part is not None else estimate
        for estimate, part in zip(estimates, wider, strict=True)
    ]


def floors(words: Sequence[Reached], items: Sequence[Reached]) -> list[float]:
    """Documents each of `items` is known to reach at least, from the counts of `words`
    (each query word's primary item): a stem item's scan ('root' | '=root',
    `vectors.stem_form`) reads every document saying its word, the others nothing known."""
    said: dict[str, float] = {}
    for word in words:
        root = vectors.stem_root(word.lexeme)
        if root is not None:
            key = vectors.STEM + root
            said[key] = max(said.get(key, 0.0), word.estimate)
    return [said.get(item.lexeme, 0.0) for item in items]


def any_form(clauses: list[tuple[str, list[str]]], counted: dict[str, float]) -> list[float]:
    """How many documents hold any form of each query word, as the phrase matches it: the
    counts (`counted`, by lexeme as the index stores it) of its word, secondary and stem
    items summed, at least as many as hold one of them."""
    forms = [
        (token, SECONDARY + token, vectors.STEM + (vectors.stem_root(token) or token))
        for token, _ in clauses
    ]
    return [sum(counted.get(lexeme, 0.0) for lexeme in lexemes) for lexemes in forms]
