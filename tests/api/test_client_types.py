"""The client's TypedDicts name only fields the server's shapes (api/shapes.py) document,
with the same closed value sets where the client narrows a field to a Literal."""

from __future__ import annotations

import typing

import pytest
from morphz_client import types as client
from rest_framework import serializers

from api import shapes

PAIRS = [
    (client.Pressure, shapes.PressureSerializer),
    (client.ContextSettings, shapes.ContextSettingsSerializer),
    (client.Context, shapes.ContextSerializer),
    (client.Event, shapes.EventSerializer),
    (client.EventPage, shapes.EventListSerializer),
    (client.EventChunk, shapes.EventChunkSerializer),
    (client.Retire, shapes.RetireSerializer),
    (client.Frame, shapes.FrameSerializer),
    (client.FrameRevision, shapes.RevisionSerializer),
    (client.FrameDetail, shapes.FrameDetailSerializer),
    (client.FramePage, shapes.FrameListSerializer),
    (client.Relation, shapes.RelationSerializer),
    (client.RelationPage, shapes.RelationListSerializer),
    (client.PendingRelease, shapes.PendingReleaseSerializer),
    (client.Receipt, shapes.ReceiptSerializer),
    (client.Transaction, shapes.TransactionSerializer),
    (client.TransactionPage, shapes.TransactionListSerializer),
    (client.Evaluation, shapes.EvaluationSerializer),
    (client.RecallResult, shapes.RecallSerializer),
    (client.SearchResult, shapes.SearchResultSerializer),
]


def _literal_values(annotation: typing.Any) -> set[str] | None:
    values: set[str] = set()
    for arg in typing.get_args(annotation) or ():
        if typing.get_origin(arg) is typing.Literal:
            values.update(typing.get_args(arg))
    if typing.get_origin(annotation) is typing.Literal:
        values.update(typing.get_args(annotation))
    return values or None


@pytest.mark.parametrize("typed, serializer", PAIRS, ids=lambda v: getattr(v, "__name__", ""))
def test_client_fields_are_server_fields(typed: typing.Any, serializer: type) -> None:
    server = serializer().fields
    hints = typing.get_type_hints(typed)
    assert set(hints) - set(server) == set()
    for name, annotation in hints.items():
        field = server[name]
        literal = _literal_values(annotation)
        if literal is not None and isinstance(field, serializers.ChoiceField):
            assert literal == set(field.choices), name


def test_the_frame_builder_and_the_schema_name_the_same_fields() -> None:
    from memory.shapes import FrameJson as FrameView
    from memory.shapes import WindowView

    assert set(typing.get_type_hints(FrameView)) == set(shapes.FrameSerializer().fields)
    assert set(typing.get_type_hints(WindowView)) == set(shapes.RetireSerializer().fields)


def test_the_memory_builders_and_the_schema_name_the_same_fields() -> None:
    from memory import shapes as built

    def names(typed: typing.Any) -> set[str]:
        return set(typing.get_type_hints(typed))

    assert names(built.ContextJson) == set(shapes.ContextSerializer().fields)
    assert names(built.ContextSettings) == set(shapes.ContextSettingsSerializer().fields)
    assert names(built.EventJson) == set(shapes.EventSerializer().fields)
    assert names(built.AppendedEvent) == set(shapes.BulkEventSerializer().fields)
    assert set(shapes.EventChunkSerializer().fields) <= names(built.EventChunk)
    assert names(built.RevisionJson) == set(shapes.RevisionSerializer().fields)
    assert names(built.TransactionJson) == set(shapes.TransactionSerializer().fields)
    assert names(built.RelationJson) == set(shapes.RelationSerializer().fields)
