"""The reference `server-memory` tools on Morphz, with the reference's semantics (R66).

Agents configured for `@modelcontextprotocol/server-memory` keep working unchanged: the nine
tools take the reference's arguments (checked as strictly as its schemas: a wrong type is a
tool error naming the field, and nothing is written) and answer its shapes, text and
`structuredContent` alike. Underneath, each change is a Morphz context transaction:

- an entity is a frame whose body is `{name, entityType, observations}`; its id comes from
  the exact name (`morphz_client.mcp_names`), so `C#`, `C++`, `Zoé`, `Zoë` and `苹果` are five
  entities, never one;
- a relation is a Morphz relation between two entity frames, its type spelled exactly;
- `delete_entities` unrelates the entity's relations and retires its frame: from that moment
  no reference read returns it (a retiring frame is deleted here, whatever its due tick),
  and creating the name again restores the same frame with the new body; history keeps all.

Reads use this process's copy of the context's frames and relations, brought to the current
version on every call (`morphz_client.mcp_snapshot`: one request, and a `diff/` when the
version moved), never the search index: every read sees every commit before it, the
caller's own included. Writes are planned on that copy and committed against its version; a
concurrent change to the same frames (two `add_observations` on one entity) makes the commit
a conflict, and the tool reads again and retries, as the reference would have serialised
the two.

Differences from the reference that remain are listed, each with its reason, in
docs/agents.md ("Differences from the reference server"); the differential test
(tests/agents/test_mcp_reference_differential.py) asserts each.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeGuard, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from morphz_client.client import MorphzClient
from morphz_client.errors import ConflictError, MorphzAPIError, TooLargeError
from morphz_client.mcp_names import NameProblem, entity_frame_id, legacy_frame_id, relation_name
from morphz_client.mcp_names import relation_type as type_of_relation
from morphz_client.mcp_server import _call, _client
from morphz_client.mcp_snapshot import snapshot_of

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
ENTITY_KEYS = ("name", "entityType", "observations")
# A write that meets a concurrent change to its frames reads again and retries; this many
# attempts (with a short random wait) ride out dozens of parallel writers on one entity.
MAX_ATTEMPTS = 60
# Codes a commit meets only when another writer got there between our read and our commit.
_RACE_CODES = frozenset({"frame_exists", "relation_exists", "unknown_relation"})
_PAGE = 200
# read_graph answers the whole graph up to about this many characters of JSON, then pages
# (a context of 20,000 small entities was a 13.5 MB answer).
GRAPH_ANSWER_CHARS = 1_000_000

T = TypeVar("T")


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


# --------------------------------------------------------------------------- the store


def _is_entity(body: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(body, dict)
        and tuple(body) == ENTITY_KEYS
        and isinstance(body["name"], str)
        and isinstance(body["entityType"], str)
        and isinstance(body["observations"], list)
        and all(isinstance(o, str) for o in body["observations"])
    )


def _entity(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in ENTITY_KEYS}


def _op(op: str, frame_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"op": op, "id": frame_id, "body": body}


def _edge(op: str, subject: str, name: str, obj: str) -> dict[str, Any]:
    return {"op": op, "subject": subject, "name": name, "object": obj}


class Graph:
    """The reference graph of one context: read from this process's up-to-date copy of the
    context (`morphz_client.mcp_snapshot`), written through `mz` (REST transactions)."""

    def __init__(self, mz: MorphzClient) -> None:
        self.mz = mz
        self.snap = snapshot_of(mz)
        self.settled: set[tuple[str, str, str]] = set()  # relations found to exist / not

    @contextmanager
    def current(self) -> Iterator[int]:
        """Hold the copy at the context's current version (yielded) while reading it."""
        with self.snap.lock:
            yield _call(lambda: self.snap.refresh(self.mz, _pages))

    # -- reads (with the copy held current) ------------------------------------------------

    def lookup(self, name: str) -> tuple[str, dict[str, Any] | None]:
        """The frame id for `name` and its frame (`status`, `body`; None if none was ever
        created). Checks the stored name, so a digest collision is refused rather than
        merged; an entity of the earlier mapping (`legacy_frame_id`) is found too."""
        frame_id = entity_frame_id(name)
        frame = self.snap.frames.get(frame_id)
        if frame is not None:
            body = frame.get("body")
            if not (_is_entity(body) and body["name"] == name):
                raise ToolError(
                    f"entity name {name!r} maps to frame {frame_id!r}, which holds something "
                    "else; nothing was changed"
                )
            return frame_id, frame
        legacy = legacy_frame_id(name)
        old = self.snap.frames.get(legacy) if legacy else None
        if (
            legacy
            and old is not None
            and _is_entity(old.get("body"))
            and old["body"]["name"] == name
        ):
            return legacy, old
        return frame_id, None

    def live(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """(frame id, frame) of the entity `name` when it exists and is not deleted, else
        None; raises ToolError as `lookup` does."""
        frame_id, frame = self.lookup(name)
        if frame is None or frame["status"] != "active":
            return None
        return frame_id, frame

    def entities(self) -> list[tuple[str, dict[str, Any]]]:
        """Every live entity as (frame id, entity), in frame id order."""
        return [
            (frame_id, _entity(frame["body"]))
            for frame_id, frame in sorted(self.snap.frames.items())
            if frame["status"] == "active" and _is_entity(frame.get("body"))
        ]

    def relations(self, **filters: str) -> list[dict[str, str]]:
        """Live relations (`subject`, `name`, `object`), those matching `filters` only."""
        out = []
        for subject, name, obj in sorted(self.snap.relations):
            rel = {"subject": subject, "name": name, "object": obj}
            if all(rel[k] == v for k, v in filters.items()):
                out.append(rel)
        return out

    def name_of(self, frame_id: str) -> str | None:
        """The entity name of a frame id, None when it is no live entity."""
        frame = self.snap.frames.get(frame_id)
        if frame is None or frame["status"] != "active" or not _is_entity(frame.get("body")):
            return None
        return str(frame["body"]["name"])

    def shape(self, rel: dict[str, Any]) -> dict[str, str] | None:
        """A Morphz relation (`subject`, `name`, `object`) as the reference's
        `{from, to, relationType}`, None when either end is no live entity."""
        subject, obj = self.name_of(rel["subject"]), self.name_of(rel["object"])
        if subject is None or obj is None:
            return None
        return {"from": subject, "to": obj, "relationType": type_of_relation(rel["name"])}

    def touching(self, frame_ids: list[str]) -> list[dict[str, str]]:
        """Every relation with at least one end among `frame_ids`, each once."""
        ids = set(frame_ids)
        return [
            shaped
            for rel in self.relations()
            if (rel["subject"] in ids or rel["object"] in ids) and (shaped := self.shape(rel))
        ]

    # -- writes --------------------------------------------------------------------------

    def commit(self, reason: str, plan: Callable[[], tuple[list[dict[str, Any]], T]]) -> T:
        """Plan the operations from the current copy and commit them against its version,
        so a concurrent change to the same frames is a conflict and never lost; then (and
        when another writer got there first) read and plan again. A relate or unrelate that
        meets an existing or missing relation is noted in `settled` and planned without."""
        for attempt in range(MAX_ATTEMPTS):
            with self.current() as version:
                ops, result = plan()
            if not ops:
                return result
            try:
                self.mz.submit(ops=ops, base_version=version, reason=f"mcp {reason}")
                return result
            except ConflictError:
                pass
            except MorphzAPIError as exc:
                errors = [d for d in exc.details if isinstance(d, dict)]
                codes = {d.get("code") for d in errors}
                if exc.status != 422 or not codes or not codes <= _RACE_CODES:
                    raise _tool_error(exc) from None
                for error in errors:
                    if error.get("code") in ("relation_exists", "unknown_relation"):
                        self.settled.add(_key(ops[error["index"]]))
                continue
            time.sleep(random.uniform(0, 0.01 * min(attempt + 1, 10)))
        raise ToolError(
            f"{reason}: other writers kept changing these entities ({MAX_ATTEMPTS} attempts); "
            "nothing was changed, call again"
        )


def _key(op: dict[str, Any]) -> tuple[str, str, str]:
    return (op["subject"], op["name"], op["object"])


def _tool_error(exc: MorphzAPIError) -> ToolError:
    details = f" details: {json.dumps(exc.details, ensure_ascii=False)}" if exc.details else ""
    return ToolError(f"{exc.code}: {exc.message}{details}")


def _pages(
    fetch: Callable[[str | None, int], Any], key: str = "frames"
) -> Iterator[dict[str, Any]]:
    """Every item of a paged REST listing. A page over the API's response cap (frames of a
    few MB each) is asked for again with half as many items, down to one."""
    cursor = None
    limit = _PAGE
    while True:
        try:
            page = fetch(cursor, limit)
        except TooLargeError:
            if limit == 1:
                raise ToolError(
                    "one frame is larger than the API's response cap; read it with frame"
                ) from None
            limit = max(1, limit // 2)
            continue
        except MorphzAPIError as exc:
            raise _tool_error(exc) from None
        yield from page[key]
        cursor = page["next_cursor"]
        if cursor is None:
            return


def _relation_name(relation_type: str) -> str:
    try:
        return relation_name(relation_type)
    except NameProblem as exc:
        raise ToolError(str(exc)) from None


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
                ops.append(_op("derive", frame_id, body))
            elif frame["status"] == "active":
                continue
            else:  # deleted: the same frame comes back with the new body
                ops += [{"op": "restore", "ids": [frame_id]}, _op("revise", frame_id, body)]
                ops += _unrelate_all(graph, frame_id)
            created.append(body)
        return ops, created

    return graph.commit("create_entities", plan)


def _unrelate_all(graph: Graph, frame_id: str) -> list[dict[str, Any]]:
    return [
        _edge("unrelate", rel["subject"], rel["name"], rel["object"])
        for rel in graph.relations()
        if frame_id in (rel["subject"], rel["object"])
    ]


def _create_relations(graph: Graph, relations: list[Relation]) -> list[dict[str, str]]:
    names = [_relation_name(r.relationType) for r in relations]

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
            edge = _edge("relate", *key)
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
                bodies[name] = (found[0], _entity(found[1]["body"]), False)
            frame_id, body, _ = bodies[name]
            before = body["observations"]
            after = change(before, given)
            changes.append([c for c in given if c not in before])
            if after != before:
                bodies[name] = (frame_id, {**body, "observations": after}, True)
        ops = [_op("revise", fid, body) for fid, body, changed in bodies.values() if changed]
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
            edge = _edge("unrelate", ends[0][0], name, ends[1][0])
            if edge not in ops and _key(edge) not in graph.settled:
                ops.append(edge)
        return ops, None

    graph.commit("delete_relations", plan)


def _matches(entity: dict[str, Any], query: str) -> bool:
    # The reference compares JavaScript's toLowerCase(); Python's lower() agrees on it
    # (final sigma included) for the text the differential test sends.
    q = query.lower()
    return (
        q in entity["name"].lower()
        or q in entity["entityType"].lower()
        or any(q in o.lower() for o in entity["observations"])
    )


def _read_graph(graph: Graph, limit: int | None, cursor: str | None) -> dict[str, Any]:
    """The whole graph when it fits GRAPH_ANSWER_CHARS and no page is asked for (as the
    reference); otherwise one page: entities from `cursor` (an offset in frame-id order), at
    most `limit` and about GRAPH_ANSWER_CHARS, with the relations starting at them (so each
    relation comes once), and `nextCursor` (null on the last page)."""
    entities = graph.entities()
    relations = [(rel["subject"], s) for rel in graph.relations() if (s := graph.shape(rel))]
    whole = {"entities": [e for _, e in entities], "relations": [r for _, r in relations]}
    if limit is None and cursor is None and _chars(whole) <= GRAPH_ANSWER_CHARS:
        return whole
    start = _offset(cursor)
    page: list[tuple[str, dict[str, Any]]] = []
    size = 0
    for frame_id, entity in entities[start:]:
        size += _chars(entity)
        if page and (len(page) == (limit or len(entities)) or size > GRAPH_ANSWER_CHARS):
            break
        page.append((frame_id, entity))
    ids = {frame_id for frame_id, _ in page}
    end = start + len(page)
    return {
        "entities": [e for _, e in page],
        "relations": [r for subject, r in relations if subject in ids],
        "nextCursor": str(end) if end < len(entities) else None,
    }


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not (cursor.isascii() and cursor.isdigit()):
        raise ToolError(f"cursor {cursor[:40]!r} is not one read_graph gave (its nextCursor)")
    return int(cursor)


def _search_nodes(graph: Graph, query: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    everything = graph.entities()
    found = [(fid, e) for fid, e in everything if _matches(e, query)]
    ids = {fid for fid, _ in found}
    relations = [
        shaped
        for rel in graph.relations()
        if (rel["subject"] in ids or rel["object"] in ids)
        and (shaped := graph.shape(rel)) is not None
    ]
    return [e for _, e in found], relations


def _open_nodes(
    graph: Graph, names: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for name in dict.fromkeys(names):
        hit = graph.live(name)
        if hit is not None:
            found.append((hit[0], _entity(hit[1]["body"])))
    return [e for _, e in found], graph.touching([fid for fid, _ in found])


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
        created = _create_entities(Graph(_client()), entities)
        return _answer(created, {"entities": created})

    @server.tool(annotations=write("Create Relations", False))
    def create_relations(relations: list[Relation]) -> CallToolResult:
        """Create multiple new relations between entities in the knowledge graph. Relations
        should be in active voice"""
        created = _create_relations(Graph(_client()), relations)
        return _answer(created, {"relations": created})

    @server.tool(annotations=write("Add Observations", False))
    def add_observations(observations: list[ObservationAddition]) -> CallToolResult:
        """Add new observations to existing entities in the knowledge graph"""
        added = _change_observations(
            Graph(_client()),
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
        _delete_entities(Graph(_client()), entityNames)
        return _done("Entities deleted successfully")

    @server.tool(annotations=write("Delete Observations", True))
    def delete_observations(deletions: list[ObservationDeletion]) -> CallToolResult:
        """Delete specific observations from entities in the knowledge graph"""
        _change_observations(
            Graph(_client()),
            [(d.entityName, d.observations) for d in deletions],
            lambda old, gone: [o for o in old if o not in gone],
            missing_is_error=False,
            reason="delete_observations",
        )
        return _done("Observations deleted successfully")

    @server.tool(annotations=write("Delete Relations", True))
    def delete_relations(relations: list[Relation]) -> CallToolResult:
        """Delete multiple relations from the knowledge graph"""
        _delete_relations(Graph(_client()), relations)
        return _done("Relations deleted successfully")

    @server.tool(annotations=read)
    def read_graph(
        limit: Annotated[int, Field(ge=1, le=10_000)] | None = None,
        cursor: str | None = None,
    ) -> CallToolResult:
        """Read the entire knowledge graph (Morphz: a graph of more than about 1 MB comes
        in pages: pass back nextCursor as cursor; limit caps the entities per page)"""
        graph = Graph(_client())
        with graph.current():
            answer = _read_graph(graph, limit, cursor)
        return _answer(answer, answer)

    @server.tool(annotations=read)
    def search_nodes(query: str) -> CallToolResult:
        """Search for nodes in the knowledge graph based on a query"""
        graph = Graph(_client())
        with graph.current():
            return _graph(*_search_nodes(graph, query))

    @server.tool(annotations=read)
    def open_nodes(names: list[str]) -> CallToolResult:
        """Open specific nodes in the knowledge graph by their names"""
        graph = Graph(_client())
        with graph.current():
            return _graph(*_open_nodes(graph, names))

    for name in REFERENCE_TOOLS:
        _no_json_in_strings(server, name)


def _no_json_in_strings(server: MCPServer, name: str) -> None:
    """The SDK parses a string argument as JSON when the parameter is a list ('["a"]' becomes
    ["a"]); the reference refuses a string there, so these tools do too."""
    tool = server._tool_manager.get_tool(name)
    assert tool is not None
    object.__setattr__(tool.fn_metadata, "pre_parse_json", lambda data: data)
