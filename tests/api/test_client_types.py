"""The client's TypedDicts (client/morphz_client/types.py) are checked against the OpenAPI
schema the server generates: a client field is a field of its component, with the same
closed value set where the client narrows it to a Literal, and every response component is
either typed in the client or listed here as left to plain JSON. The client stays
standalone: it never imports the server, the check runs here."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from morphz_client import types as client

# client TypedDict -> the schema component it types.
PAIRS: dict[Any, str] = {
    client.Pressure: "Pressure",
    client.ContextSettings: "ContextSettings",
    client.Context: "Context",
    client.Event: "Event",
    client.AppendedEvent: "BulkEvent",
    client.EventPage: "EventList",
    client.EventChunk: "EventChunk",
    client.Cancellation: "Cancellation",
    client.Retire: "Retire",
    client.Frame: "Frame",
    client.FrameRevision: "Revision",
    client.FrameDetail: "FrameDetail",
    client.FramePage: "FrameList",
    client.Relation: "Relation",
    client.RelationPage: "RelationList",
    client.PendingRelease: "PendingRelease",
    client.Receipt: "Receipt",
    client.Transaction: "Transaction",
    client.TransactionPage: "TransactionList",
    client.Evaluation: "Evaluation",
    client.RecallResult: "Recall",
    client.SearchResult: "SearchResult",
    client.Fork: "Fork",
    client.ForkedFrom: "ForkedFrom",
    client.EvaluationSummary: "EvaluationSummary",
    client.EvaluationDetail: "EvaluationDetail",
    client.EvaluationPage: "EvaluationList",
    client.Diff: "Diff",
}

# Response components the client returns as plain JSON (dict), with why.
UNTYPED = {
    "Error": "raised as morphz_client errors, never returned",
    "EventAppendResponse": "one of Event and BulkEventList, each typed",
    "EventAppendRetryResponse": "one of Event and BulkEventList, each typed",
    "BulkEventList": "the client returns its `events` (AppendedEvent)",
    "ContextList": "the client returns its `contexts` (Context)",
    "ApiIndex": "read by the client's tools only",
    "Health": "for load balancers and orchestrators, not agents",
    "Protocol": "morphz_client.protocol builds the same offline",
    "ReplyResult": "the model's reply outcome, read as JSON",
    "ErasureOut": "an admin's erasure, read as JSON",
    "ErasureList": "an admin's erasure, read as JSON",
    "Tombstone": "an admin's erasure, read as JSON",
    "HistoryPage": "inside FrameDetail, read as JSON",
    "ErrorBody": "raised as morphz_client errors, never returned",
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _literal_values(annotation: Any) -> set[str] | None:
    values: set[str] = set()
    for arg in typing.get_args(annotation) or ():
        if typing.get_origin(arg) is typing.Literal:
            values.update(typing.get_args(arg))
    if typing.get_origin(annotation) is typing.Literal:
        values.update(typing.get_args(annotation))
    return values or None


def _enum(schema: dict[str, Any], prop: dict[str, Any]) -> set[str] | None:
    for ref in [prop.get("$ref")] + [p.get("$ref") for p in prop.get("allOf", [])]:
        if ref:
            return set(schema["components"]["schemas"][ref.rsplit("/", 1)[1]].get("enum", []))
    return set(prop["enum"]) if "enum" in prop else None


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[1]} if "$ref" in node else set()
        return found.union(*(_refs(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(value) for value in node))
    return set()


def _response_components(schema: dict[str, Any]) -> set[str]:
    """Every component an answer holds, nested ones included (enums aside)."""
    components = schema["components"]["schemas"]
    todo = {
        name
        for operations in schema["paths"].values()
        for operation in operations.values()
        for answer in operation.get("responses", {}).values()
        for name in _refs(answer.get("content", {}))
    }
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen and "enum" not in components[name]:
            seen.add(name)
            todo |= _refs(components[name])
    return seen


@pytest.mark.parametrize("typed", list(PAIRS), ids=lambda t: t.__name__)
def test_client_fields_are_fields_of_their_component(typed: Any, schema: dict[str, Any]) -> None:
    component = schema["components"]["schemas"][PAIRS[typed]]
    properties = component["properties"]
    hints = typing.get_type_hints(typed)
    assert set(hints) - set(properties) == set()
    for name, annotation in hints.items():
        literal = _literal_values(annotation)
        enum = _enum(schema, properties[name])
        if literal is not None and enum is not None:
            assert literal == enum, name


def test_every_response_component_is_typed_in_the_client_or_said_untyped(
    schema: dict[str, Any],
) -> None:
    assert _response_components(schema) - set(PAIRS.values()) - set(UNTYPED) == set()


def test_the_lists_name_components_that_exist(schema: dict[str, Any]) -> None:
    names = set(schema["components"]["schemas"])
    assert (set(PAIRS.values()) | set(UNTYPED)) - names == set()


def test_the_client_package_does_not_import_the_server() -> None:
    import ast
    from pathlib import Path

    package = Path(client.__file__).parent
    server = ("memory", "api", "morphz", "django", "rest_framework")
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            assert not [n for n in names if n.split(".")[0] in server], path
