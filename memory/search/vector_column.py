"""Embeddings as pgvector values beside their float16 bytes, where the server has pgvector.

Migration 0031 adds `memory_searchdocument.embedding_vector`, and a trigger filling it from
the bytes for a writer that gives only those, where the `vector` extension is available;
elsewhere nothing changes. `available()` is the one answer to "is pgvector here", read once
per database. Search's nearest-neighbour step (`memory.search.near`) runs in SQL where it
is, in Python elsewhere (`semantic.nearest`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from memory.sql import named_row, statements

COLUMN = "embedding_vector"
_present: dict[tuple[str, str, str], bool] = {}  # by (host, port, database name)
_texts: Any = None  # every float16 bit pattern's value as pgvector reads it


def _database() -> tuple[str, str, str]:
    config = connection.settings_dict
    return (str(config.get("HOST", "")), str(config.get("PORT", "")), str(config["NAME"]))


def available() -> bool:
    """Whether this database holds the vector column (pgvector was there when migrated).
    Writers keep the column in step whenever it is there, whatever `used` says."""
    database = _database()
    if database not in _present:
        with connection.cursor() as cursor:
            cursor.execute(statements("memory.search")["vector_column"])
            row = named_row(cursor)
        _present[database] = bool(row and row["present"])
    return _present[database]


def forget() -> None:
    """Read the answer again on next use (the migration adds or drops the column)."""
    _present.clear()


def used() -> bool:
    """Whether search finds documents by meaning in SQL: the column is there and
    MORPHZ_SEARCH_PGVECTOR is on (the default; off, the Python path runs instead)."""
    return bool(getattr(settings, "MORPHZ_SEARCH_PGVECTOR", True)) and available()


def literal(blob: bytes | memoryview | None) -> str | None:
    """A stored embedding (float16 bytes) in pgvector's text form, the same values exactly;
    None when there is none. Each bit pattern's text is looked up, not formatted: formatting
    256 floats costs more than embedding the document."""
    global _texts
    if not blob:
        return None
    if _texts is None:
        values = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
        _texts = np.array([repr(float(value)) for value in values], dtype=object)
    return "[" + ",".join(_texts[np.frombuffer(bytes(blob), dtype=np.uint16)].tolist()) + "]"


def upsert_parts() -> dict[str, str]:
    """What the index worker's upsert adds for the column (from its staging table's text),
    or nothing where the column is not there: {column, value, assign}."""
    if not available():
        return {"column": "", "value": "", "assign": ""}
    return {
        "column": f", {COLUMN}",
        "value": f", {COLUMN}::vector",
        "assign": f", {COLUMN} = EXCLUDED.{COLUMN}",
    }


def copy_parts() -> dict[str, str]:
    """What a copy of documents adds for the column (a fork copies each vector with its
    document, so the trigger need not decode it again), or nothing where the column is not
    there: {column, value} for `INSERT ... (...{column}) SELECT ...{value}` from `d`."""
    if not available():
        return {"column": "", "value": ""}
    return {"column": f", {COLUMN}", "value": f", d.{COLUMN}"}
