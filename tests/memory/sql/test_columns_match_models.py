"""The column registry (memory.sql.columns) names real columns of the models' tables, and
the lists that stand for a whole row or a row type have exactly its columns."""

from __future__ import annotations

import dataclasses

import pytest
from django.apps import apps

from memory.locking import LockedContext
from memory.sql.columns import (
    CONTEXT_ALL,
    EVENT_ALL,
    FRAME_ALL,
    REGISTRY,
    RELATION_ALL,
    TOKEN_ALL,
)
from memory.tx.apply import EventState, FrameState


def _columns(table: str) -> list[str]:
    models = [m for m in apps.get_app_config("memory").get_models() if m._meta.db_table == table]
    assert len(models) == 1, table
    return [field.column for field in models[0]._meta.concrete_fields]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_list_names_columns_of_its_table(name: str) -> None:
    table, columns = REGISTRY[name]
    names = [column.split("::")[0] for column in columns]  # without a cast
    assert len(set(names)) == len(names)
    assert set(names) <= set(_columns(table)), set(names) - set(_columns(table))


@pytest.mark.parametrize(
    ("table", "columns"),
    [
        ("memory_frame", FRAME_ALL),
        ("memory_event", EVENT_ALL),
        ("memory_relation", RELATION_ALL),
        ("memory_apitoken", TOKEN_ALL),
        ("memory_context", CONTEXT_ALL),
    ],
)
def test_a_whole_row_is_every_column_of_its_table_in_order(
    table: str, columns: tuple[str, ...]
) -> None:
    """Copies (a fork) write every column: a column added to the model must be added here."""
    assert list(columns) == _columns(table)


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_what_the_commit_path_reads_fills_its_types() -> None:
    """A row read by name builds the working copy's types (`id` is their `pk`)."""
    frame = {"pk" if c == "id" else c for c in REGISTRY["frame_loaded"][1]}
    assert frame <= _fields(FrameState)
    event = {"pk" if c == "id" else c for c in REGISTRY["event_loaded"][1]}
    assert event <= _fields(EventState)
    context = {"pk" if c == "id" else c for c in REGISTRY["context_locked"][1]}
    assert context == _fields(LockedContext)
