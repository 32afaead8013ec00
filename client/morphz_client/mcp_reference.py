"""The reference `server-memory` tools on Morphz, with the reference's semantics (R66).

How it works: docs/internals.md, section `client/morphz_client/mcp_reference.py`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from morphz_client.mcp_calls import request_client
from morphz_client.mcp_graph import (
    Graph,
    checked_relation_name,
    edge_op,
    entity_of,
    frame_op,
    open_nodes_of,
    read_graph_page,
    relation_key,
    search_nodes_of,
)
from morphz_client.mcp_names import NameProblem, relation_name

__all__ = ["REFERENCE_TOOLS", "add_reference_tools"]

REFERENCE_TOOLS = (
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
)


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=False)


class Entity(_Strict):
    name: str = Field(description="The name of the entity")
    entityType: str = Field(description="The type of the entity")
    observations: list[str] = Field(
        description="An array of observation contents associated with the entity"
    )


class Relation(_Strict):
    from_: str = Field(alias="from", description="The name of the entity where the relation starts")
    to: str = Field(description="The name of the entity where the relation ends")
    relationType: str = Field(description="The type of the relation")

    def shape(self) -> dict[str, str]:
        """The reference's relation shape, `{from, to, relationType}`."""
        return {"from": self.from_, "to": self.to, "relationType": self.relationType}


class ObservationAddition(_Strict):
    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")


class ObservationDeletion(_Strict):
    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


# --------------------------------------------------------------------------- answers


def _answer(value: Any, structured: dict[str, Any]) -> CallToolResult:
    """The reference's answer: the value as indented JSON text, and `structuredContent`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _done(message: str) -> CallToolResult:
    return _answer(message, {"success": True, "message": message})


def _graph(entities: list[dict[str, Any]], relations: list[dict[str, str]]) -> CallToolResult:
    graph = {"entities": entities, "relations": relations}
    return _answer(graph, graph)


# --------------------------------------------------------------------------- the tools


def _create_entities(graph: Graph, entities: list[Entity]) -> list[dict[str, Any]]:
    def plan() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ops creating the new names (or restoring deleted ones), and their bodies."""
        ops: list[dict[str, Any]] = []
        created: list[dict[str, Any]] = []
        seen: set[str] = set()
        for entity in entities:
            if entity.name in seen:
                continue  # a name given twice in one call is created once
            seen.add(entity.name)
            frame_id, frame = graph.lookup(entity.name)
            body = entity.model_dump()
            if frame is None:
                ops.append(frame_op("derive", frame_id, body))
            elif frame["status"] == "active":
                continue
            else:  # deleted: the same frame comes back with the new body
                ops += [{"op": "restore", "ids": [frame_id]}, frame_op("revise", frame_id, body)]
                ops += _unrelate_all(graph, frame_id)
            created.append(body)
        return ops, created

    return graph.commit("create_entities", plan)


def _unrelate_all(graph: Graph, frame_id: str) -> list[dict[str, Any]]:
    return [
        edge_op("unrelate", rel["subject"], rel["name"], rel["object"])
        for rel in graph.relations()
        if frame_id in (rel["subject"], rel["object"])
    ]


def _create_relations(graph: Graph, relations: list[Relation]) -> list[dict[str, str]]:
    names = [checked_relation_name(r.relationType) for r in relations]

    def plan() -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        """The relate ops for relations not there yet, and their reference shapes; raises
        ToolError when an end is no live entity."""
        ops: list[dict[str, Any]] = []
        created: list[dict[str, str]] = []
        ids: dict[str, str] = {}
        for relation, name in zip(relations, names, strict=True):
            for end in (relation.from_, relation.to):
                if end not in ids:
                    found = graph.live(end)
                    if found is None:
                        raise ToolError(
                            f"Entity with name {end} not found: a relation needs both of its "
                            "entities (create them first); nothing was changed"
                        )
                    ids[end] = found[0]
            key = (ids[relation.from_], name, ids[relation.to])
            edge = edge_op("relate", *key)
            if edge in ops or key in graph.settled:
                continue
            ops.append(edge)
            created.append(relation.shape())
        return ops, created

    return graph.commit("create_relations", plan)


def _change_observations(
    graph: Graph,
    items: list[tuple[str, list[str]]],
    change: Callable[[list[str], list[str]], list[str]],
    *,
    missing_is_error: bool,
    reason: str,
) -> list[list[str]]:
    """Apply `change(current, given)` to each named entity in order (an entity named twice
    sees its first change); returns what each item changed."""

    def plan() -> tuple[list[dict[str, Any]], list[list[str]]]:
        """One revise op per entity whose observations changed, and each item's change."""
        bodies: dict[str, tuple[str, dict[str, Any], bool]] = {}
        changes: list[list[str]] = []
        for name, given in items:
            if name not in bodies:
                found = graph.live(name)
                if found is None:
                    if missing_is_error:
                        raise ToolError(f"Entity with name {name} not found")
                    changes.append([])
                    continue
                bodies[name] = (found[0], entity_of(found[1]["body"]), False)
            frame_id, body, _ = bodies[name]
            before = body["observations"]
            after = change(before, given)
            changes.append([c for c in given if c not in before])
            if after != before:
                bodies[name] = (frame_id, {**body, "observations": after}, True)
        ops = [frame_op("revise", fid, body) for fid, body, changed in bodies.values() if changed]
        return ops, changes

    return graph.commit(reason, plan)


def _delete_entities(graph: Graph, names: list[str]) -> None:
    def plan() -> tuple[list[dict[str, Any]], None]:
        """Unrelate every relation of the live named entities, then retire their frames."""
        ops: list[dict[str, Any]] = []
        retire: list[str] = []
        for name in dict.fromkeys(names):
            found = graph.live(name)
            if found is None:
                continue
            retire.append(found[0])
            ops += [op for op in _unrelate_all(graph, found[0]) if op not in ops]
        if retire:
            ops.append({"op": "retire", "refs": retire})
        return ops, None

    graph.commit("delete_entities", plan)


def _delete_relations(graph: Graph, relations: list[Relation]) -> None:
    def plan() -> tuple[list[dict[str, Any]], None]:
        """Unrelate ops for the given relations that exist; the rest are skipped."""
        ops: list[dict[str, Any]] = []
        for relation in relations:
            ends = graph.live(relation.from_), graph.live(relation.to)
            if ends[0] is None or ends[1] is None:
                continue
            try:
                name = relation_name(relation.relationType)
            except NameProblem:
                continue  # no such relation can exist
            edge = edge_op("unrelate", ends[0][0], name, ends[1][0])
            if edge not in ops and relation_key(edge) not in graph.settled:
                ops.append(edge)
        return ops, None

    graph.commit("delete_relations", plan)


def _annotations(
    title: str, *, read_only: bool, destructive: bool, idempotent: bool
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


# long: one closure per reference tool, registered on `server`; each is short and reads alone
def add_reference_tools(server: MCPServer) -> None:
    """Register the nine reference tools (names, descriptions and arguments as the pinned
    reference, 2026.8.31)."""

    def write(title: str, destructive: bool) -> ToolAnnotations:
        """Annotations of a writing tool (a destructive one is also idempotent)."""
        return _annotations(title, read_only=False, destructive=destructive, idempotent=destructive)

    read = _annotations("Read", read_only=True, destructive=False, idempotent=True)

    @server.tool(annotations=write("Create Entities", False))
    def create_entities(entities: list[Entity]) -> CallToolResult:
        """Create multiple new entities in the knowledge graph"""
        created = _create_entities(Graph(request_client()), entities)
        return _answer(created, {"entities": created})

    @server.tool(annotations=write("Create Relations", False))
    def create_relations(relations: list[Relation]) -> CallToolResult:
        """Create multiple new relations between entities in the knowledge graph. Relations
        should be in active voice"""
        created = _create_relations(Graph(request_client()), relations)
        return _answer(created, {"relations": created})

    @server.tool(annotations=write("Add Observations", False))
    def add_observations(observations: list[ObservationAddition]) -> CallToolResult:
        """Add new observations to existing entities in the knowledge graph"""
        added = _change_observations(
            Graph(request_client()),
            [(o.entityName, o.contents) for o in observations],
            lambda old, new: old + [c for c in new if c not in old],
            missing_is_error=True,
            reason="add_observations",
        )
        results = [
            {"entityName": o.entityName, "addedObservations": a}
            for o, a in zip(observations, added, strict=True)
        ]
        return _answer(results, {"results": results})

    @server.tool(annotations=write("Delete Entities", True))
    def delete_entities(entityNames: list[str]) -> CallToolResult:
        """Delete multiple entities and their associated relations from the knowledge graph"""
        _delete_entities(Graph(request_client()), entityNames)
        return _done("Entities deleted successfully")

    @server.tool(annotations=write("Delete Observations", True))
    def delete_observations(deletions: list[ObservationDeletion]) -> CallToolResult:
        """Delete specific observations from entities in the knowledge graph"""
        _change_observations(
            Graph(request_client()),
            [(d.entityName, d.observations) for d in deletions],
            lambda old, gone: [o for o in old if o not in gone],
            missing_is_error=False,
            reason="delete_observations",
        )
        return _done("Observations deleted successfully")

    @server.tool(annotations=write("Delete Relations", True))
    def delete_relations(relations: list[Relation]) -> CallToolResult:
        """Delete multiple relations from the knowledge graph"""
        _delete_relations(Graph(request_client()), relations)
        return _done("Relations deleted successfully")

    @server.tool(annotations=read)
    def read_graph(
        limit: Annotated[int, Field(ge=1, le=10_000)] | None = None,
        cursor: str | None = None,
    ) -> CallToolResult:
        """Read the entire knowledge graph (Morphz: a graph of more than about 1 MB comes
        in pages: pass back nextCursor as cursor; limit caps the entities per page)"""
        graph = Graph(request_client())
        with graph.current():
            answer = read_graph_page(graph, limit, cursor)
        return _answer(answer, answer)

    @server.tool(annotations=read)
    def search_nodes(query: str) -> CallToolResult:
        """Search for nodes in the knowledge graph based on a query"""
        graph = Graph(request_client())
        with graph.current():
            return _graph(*search_nodes_of(graph, query))

    @server.tool(annotations=read)
    def open_nodes(names: list[str]) -> CallToolResult:
        """Open specific nodes in the knowledge graph by their names"""
        graph = Graph(request_client())
        with graph.current():
            return _graph(*open_nodes_of(graph, names))
