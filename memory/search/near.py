"""Search's nearest-neighbour step (R61, the hybrid first stage): the documents closest to
a question in meaning, whether or not its words find them. Compared in SQL where the
database holds the vectors (`vector_column.used`), in Python otherwise
(`semantic.nearest`): the same documents either way."""

from __future__ import annotations

from typing import Any

from django.db import connection

from memory.search import semantic, vector_column
from memory.sql import named_rows, statements


def closest(
    ctx: int, filters: str, params: dict[str, Any], meaning: bytes, count: int
) -> list[tuple[int, bytes]]:
    """At most `count` documents (id, embedding), closest first, of the newest
    semantic.NEAR_SCAN of context `ctx` that `filters` keep (" AND d.... " SQL, values in
    `params`, which also holds the embedder's `model`), of cosine semantic.NEAR_MIN or more
    to the query's embedding `meaning` (closer than that, a question shares no topic with
    them)."""
    values = {**params, "ctx": ctx}
    if vector_column.used():
        literal = vector_column.literal(meaning)
        if literal is None:
            return []
        wanted: dict[str, Any] = {"meaning": literal, "dims": len(meaning) // 2}
        wanted.update({"floor": semantic.NEAR_MIN, "near": count})
        statement = statements("memory.search")["near"].format(
            filters=filters, scan=semantic.NEAR_SCAN
        )
        with connection.cursor() as cursor:
            cursor.execute(statement, {**values, **wanted})
            return [(row["id"], bytes(row["embedding"])) for row in named_rows(cursor)]
    statement = statements("memory.search")["near_candidates"].format(
        filters=filters, scan=semantic.NEAR_SCAN
    )
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        rows = [(row["id"], bytes(row["embedding"])) for row in named_rows(cursor)]
    return semantic.nearest(rows, meaning, count)
