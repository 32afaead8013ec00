"""Morphz as an MCP server (R48), on the official `mcp` SDK (`MCPServer`).

- Tools: `active_context` (evaluate and compile), `commit` (a context transaction),
  `append` (an event), `recall`, `search`, `read_event`, `frame`, `frames`; plus the tool
  names of the reference `server-memory` (`create_entities`, `create_relations`,
  `add_observations`, `delete_observations`, `delete_entities`, `delete_relations`,
  `read_graph`, `search_nodes`, `open_nodes`) mapped onto transactions: an entity is a frame
  (its id from its name), an observation a line of its body, a relation a named relation.
  Each of those replies says what Morphz does differently.
- Prompt `morphz_protocol`: the model protocol's instructions for the context.
- Resource `morphz://context/active`: the compiled active context.

Two transports. stdio: the `morphz-mcp` console command (or `python -m
morphz_client.mcp_server`) reads `MORPHZ_URL`, `MORPHZ_TOKEN`, `MORPHZ_CONTEXT` and talks to
Morphz over REST. Streamable HTTP: the server mounts `streamable_http_app()` at `/mcp/` in
its ASGI app (`morphz.mcp_http`); each request's bearer token picks the context, exactly as
on the REST API (a token reaches its own context only).

Every tool goes through a `MorphzClient`, so the REST API's checks and errors apply to MCP
too; `current_client` tells which one serves the request being handled.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from morphz_client.client import MorphzClient
from morphz_client.errors import MorphzAPIError, MorphzError

__all__ = ["build_server", "current_client", "main", "to_frame_id"]

# The client serving the request being handled: set per HTTP request by the mounted app,
# or once for the stdio server.
current_client: ContextVar[MorphzClient] = ContextVar("morphz_mcp_client")

DIFFERENCE_RETIRE = (
    "Morphz keeps history: a deleted entity is retired in two steps (retiring now, retired at "
    "its due tick; revise or restore cancels), and its frame id is never reused."
)


def _client() -> MorphzClient:
    try:
        return current_client.get()
    except LookupError:
        raise ToolError("no Morphz context for this request (missing or unknown token)") from None


def _call(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except MorphzAPIError as exc:
        details = f" details: {json.dumps(exc.details, ensure_ascii=False)}" if exc.details else ""
        raise ToolError(f"{exc.code}: {exc.message}{details}") from None
    except MorphzError as exc:
        raise ToolError(str(exc)) from None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


_ID_BAD = re.compile(r"[^a-z0-9._-]+")


def to_frame_id(name: str) -> str:
    """A frame id for a reference-server entity name: lower-case, other characters as `-`."""
    frame_id = _ID_BAD.sub("-", name.strip().lower()).strip("-._")
    if not frame_id:
        raise ToolError(f"entity name {name!r} has no letters or digits to make a frame id")
    return frame_id[:128]


def _relation_name(name: str) -> str:
    return to_frame_id(name)


def _quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _entity_body(name: str, entity_type: str, observations: list[str]) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": observations}


def _tx_text(ops: list[str], *, base: int | None, reason: str) -> str:
    header = f"(base-version {base}) " if base is not None else ""
    return f"(context-tx {header}(reason {_quote(reason)}) " + " ".join(ops) + ")"


def _field_text(key: str, value: Any) -> str:
    if isinstance(value, list):
        return f"({key} [" + " ".join(_quote(str(v)) for v in value) + "])"
    return f"({key} {_quote(str(value))})"


def _body_text(body: dict[str, Any]) -> str:
    return " ".join(_field_text(k, v) for k, v in body.items())


def _commit(
    mz: MorphzClient, ops: list[str], reason: str, base: int | None = None
) -> dict[str, Any]:
    """Commit through the reply path so the answer carries the compact feedback."""
    out = mz.take_apart(
        "",
        [
            {
                "id": "mcp",
                "name": "context_tx",
                "arguments": {"tx": _tx_text(ops, base=base, reason=reason)},
            }
        ],
    )
    (entry,) = out["transactions"]
    if entry["status"] != "committed":
        raise ToolError(out["feedback"])
    return {"receipt": entry["receipt"], "feedback": out["feedback"]}


def _entity(frame: dict[str, Any]) -> dict[str, Any]:
    body = frame.get("body") or {}
    observations = body.get("observations")
    if not isinstance(observations, list):
        observations = [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in body.items()]
    return {
        "name": body.get("name", frame["id"]) if isinstance(body.get("name"), str) else frame["id"],
        "entityType": body.get("entityType", "frame"),
        "observations": observations,
        "morphz": {
            "id": frame["id"],
            "revision": frame.get("revision"),
            "status": frame.get("status"),
        },
    }


def _all_frames(mz: MorphzClient, status: str | None = None) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = mz.frames(status=status, cursor=cursor, limit=200)
        frames.extend(page["frames"])  # type: ignore[arg-type]
        cursor = page["next_cursor"]
        if cursor is None:
            return frames


def _relations_between(mz: MorphzClient, ids: set[str]) -> list[dict[str, Any]]:
    out = []
    cursor = None
    while True:
        page = mz.relations(cursor=cursor, limit=200)
        for rel in page["relations"]:
            if rel["subject"] in ids and rel["object"] in ids:
                out.append(
                    {"from": rel["subject"], "to": rel["object"], "relationType": rel["name"]}
                )
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def build_server(instructions: str | None = None) -> MCPServer:
    """The MCP server; tools act through `current_client`."""
    from morphz_client.protocol import instructions as offline_instructions

    server = MCPServer(
        "morphz",
        instructions=instructions
        or "Morphz memory: read active_context, change memory with commit (a context "
        "transaction), recall/search/read_event to look things up. The morphz_protocol "
        "prompt teaches the transaction language.",
    )

    # -- native memory tools ------------------------------------------------------------

    @server.tool()
    def active_context(include_instructions: bool = False) -> str:
        """Evaluate: claim new inputs and return the compiled active context (state line,
        frames, relations, observations with @eN refs). Write base-version from its version."""
        mz = _client()
        view = _call(lambda: mz.evaluate(include_instructions=include_instructions))
        return str(view["text"])

    @server.tool()
    def commit(tx: str) -> str:
        """Commit one context transaction, e.g. (context-tx (base-version 12) (derive
        test-result (from @e42) (tests passed)) (retire @e42)). All or nothing; a rejection
        names each failing operation with its index, code and message."""
        mz = _client()
        out = _call(
            lambda: mz.take_apart(
                "", [{"id": "mcp", "name": "context_tx", "arguments": {"tx": tx}}]
            )
        )
        entry = out["transactions"][0] if out["transactions"] else None
        if entry is None or entry["status"] != "committed":
            raise ToolError(out["feedback"])
        return _dump(
            {"receipt": entry["receipt"], "ref": entry["ref"], "feedback": out["feedback"]}
        )

    @server.tool()
    def append(
        kind: str, content: str, delivers: list[str] | None = None, thread: str | None = None
    ) -> str:
        """Append an event: kind user_message, tool_result, agent_message or external_fact.
        delivers lists the request or action refs (@eN) it answers."""
        mz = _client()
        event = _call(
            lambda: mz.append_event(kind, content, delivers=delivers, thread=thread)  # type: ignore[arg-type]
        )
        return _dump({"ref": event["ref"], "seq": event["seq"], "kind": event["kind"]})

    @server.tool()
    def recall(
        frame_id: str,
        depth: int = 1,
        direction: str = "ancestors",
        include_bodies: bool = True,
        include_events: bool = False,
        max_nodes: int = 16,
        cursor: str | None = None,
    ) -> str:
        """Walk the cognitive graph from a frame (retired items too): ancestors follows
        sources and relations subject->object, descendants what cites the frame, both the
        union. Returns nodes, edges and next_cursor."""
        mz = _client()
        return _dump(
            _call(
                lambda: mz.recall(
                    frame_id,
                    depth=depth,
                    direction=direction,  # type: ignore[arg-type]
                    include_bodies=include_bodies,
                    include_events=include_events,
                    max_nodes=max_nodes,
                    cursor=cursor,
                )
            )
        )

    @server.tool()
    def search(q: str, type: str | None = None, status: str | None = None, limit: int = 10) -> str:
        """Lexical search over frames and events (retired too); hits carry refs and snippets."""
        mz = _client()
        result = _call(lambda: mz.search(q, type=type, status=status, limit=limit))
        hits = [
            {k: hit.get(k) for k in ("type", "ref", "status", "kind", "snippet")}
            for hit in result["hits"]
        ]
        return _dump({"hits": hits, "lag": result.get("lag")})

    @server.tool()
    def read_event(ref: str, offset: int = 0, length: int = 8000) -> str:
        """Read an event's text by ref in chunks (any event, retired too); next_offset
        continues, null at the end."""
        mz = _client()
        chunk = _call(lambda: mz.read_event(ref, offset=offset, length=length))
        return _dump(
            {
                k: chunk.get(k)
                for k in ("ref", "kind", "status", "size", "offset", "next_offset", "content")
            }
        )

    @server.tool()
    def frame(id: str) -> str:
        """One frame (any status) with its revisions and write history."""
        mz = _client()
        return _dump(_call(lambda: mz.frame(id)))

    @server.tool()
    def frames(status: str | None = None) -> str:
        """Frames of the context: id, revision, status, protected, body, sources."""
        mz = _client()
        return _dump(_call(lambda: _all_frames(mz, status)))

    @server.prompt(name="morphz_protocol")
    def morphz_protocol() -> str:
        """The Morphz model protocol: how to read the context and write transactions."""
        try:
            mz = current_client.get()
        except LookupError:
            return offline_instructions()
        return str(_call(lambda: mz.protocol()["instructions"]))

    @server.resource(
        "morphz://context/active",
        name="active-context",
        description="The compiled active context (a continuation: claims no inputs).",
        mime_type="text/plain",
    )
    def active_resource() -> str:
        mz = _client()
        return str(_call(lambda: mz.evaluate(continuation=True))["text"])

    _reference_tools(server)
    return server


def _reference_tools(server: MCPServer) -> None:
    """The reference `server-memory` tool names, mapped onto transactions."""

    @server.tool()
    def create_entities(entities: list[dict[str, Any]]) -> str:
        """Create entities ({name, entityType, observations}); each becomes a frame."""
        mz = _client()
        ops, created = [], []
        for entity in entities:
            name = str(entity.get("name", ""))
            frame_id = to_frame_id(name)
            body = _entity_body(
                name,
                str(entity.get("entityType", "entity")),
                list(entity.get("observations") or []),
            )
            ops.append(f"(derive {frame_id} {_body_text(body)})")
            created.append({**body, "morphz": {"id": frame_id}})
        result = _call(lambda: _commit(mz, ops, "create_entities"))
        return _dump(
            {
                "created": created,
                "morphz": f"Stored as frames at version {result['receipt']['version']}; an entity "
                "name maps to a frame id (lower-case, other characters as '-'), and a name "
                "that is already used is refused, never merged.",
            }
        )

    @server.tool()
    def create_relations(relations: list[dict[str, Any]]) -> str:
        """Create relations ({from, to, relationType}) between entities, in active voice."""
        mz = _client()
        ops = [
            f"(relate {to_frame_id(str(r['from']))} {_relation_name(str(r['relationType']))} {to_frame_id(str(r['to']))})"
            for r in relations
        ]
        result = _call(lambda: _commit(mz, ops, "create_relations"))
        return _dump(
            {
                "created": relations,
                "morphz": f"Committed at version {result['receipt']['version']}; relation names "
                "are lower-case with '-' for other characters.",
            }
        )

    def _revise_observations(
        items: list[dict[str, Any]],
        change: Callable[[list[str], list[str]], list[str]],
        reason: str,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        mz = _client()
        version = _call(lambda: mz.context())["version"]
        ops, out = [], []
        for item in items:
            name = str(item.get("entityName", ""))
            frame_id = to_frame_id(name)
            current = _call(functools.partial(mz.frame, frame_id))
            entity = _entity(current)
            given = [str(c) for c in (item.get("contents") or item.get("observations") or [])]
            observations = change(entity["observations"], given)
            body = _entity_body(entity["name"], entity["entityType"], observations)
            ops.append(f"(revise {current['id']} {_body_text(body)})")
            out.append({"entityName": name, "observations": observations})
        # The base version makes a concurrent change to these frames a conflict, not a loss.
        return out, _call(lambda: _commit(mz, ops, reason, base=version))

    @server.tool()
    def add_observations(observations: list[dict[str, Any]]) -> str:
        """Add observations ({entityName, contents}) to existing entities."""
        out, result = _revise_observations(
            observations,
            lambda old, new: old + [c for c in new if c not in old],
            "add_observations",
        )
        return _dump(
            {
                "updated": out,
                "morphz": f"Each entity's frame was revised (version {result['receipt']['version']}); "
                "earlier revisions stay readable in its write history.",
            }
        )

    @server.tool()
    def delete_observations(deletions: list[dict[str, Any]]) -> str:
        """Delete observations ({entityName, observations}) from entities."""
        out, result = _revise_observations(
            deletions, lambda old, gone: [o for o in old if o not in gone], "delete_observations"
        )
        return _dump(
            {
                "updated": out,
                "morphz": "Revised, not erased: the removed observations stay in the frame's "
                f"write history (version {result['receipt']['version']}).",
            }
        )

    @server.tool()
    def delete_entities(entityNames: list[str]) -> str:
        """Delete entities by name (and, in Morphz, retire their frames in two steps)."""
        mz = _client()
        ids = [to_frame_id(n) for n in entityNames]
        result = _call(lambda: _commit(mz, [f"(retire {' '.join(ids)})"], "delete_entities"))
        pending = result["receipt"].get("pending_release") or []
        return _dump(
            {
                "deleted": entityNames,
                "retiring": [{"id": p["frame"], "due_tick": p["due_tick"]} for p in pending],
                "morphz": DIFFERENCE_RETIRE,
            }
        )

    @server.tool()
    def delete_relations(relations: list[dict[str, Any]]) -> str:
        """Delete relations ({from, to, relationType})."""
        mz = _client()
        ops = [
            f"(unrelate {to_frame_id(str(r['from']))} {_relation_name(str(r['relationType']))} {to_frame_id(str(r['to']))})"
            for r in relations
        ]
        result = _call(lambda: _commit(mz, ops, "delete_relations"))
        return _dump(
            {
                "deleted": relations,
                "morphz": "Unrelated at version "
                f"{result['receipt']['version']}; the history keeps the relation.",
            }
        )

    @server.tool()
    def read_graph() -> str:
        """The whole graph: active and retiring entities and the relations between them."""
        mz = _client()
        live = [f for f in _call(lambda: _all_frames(mz)) if f["status"] != "retired"]
        ids = {f["id"] for f in live}
        return _dump(
            {
                "entities": [_entity(f) for f in live],
                "relations": _call(lambda: _relations_between(mz, ids)),
                "morphz": "Retired entities are left out; recall and frame still reach them.",
            }
        )

    @server.tool()
    def search_nodes(query: str) -> str:
        """Entities matching a query (names, types, observations), with their relations."""
        mz = _client()
        hits = _call(lambda: mz.search(query, type="frame", limit=50))["hits"]
        found = [
            _call(functools.partial(mz.frame, h["ref"])) for h in hits if h["status"] != "retired"
        ]
        ids = {f["id"] for f in found}
        return _dump(
            {
                "entities": [_entity(f) for f in found],
                "relations": _call(lambda: _relations_between(mz, ids)),
                "morphz": "Lexical search (words, any language); the index may lag a commit "
                "by a moment.",
            }
        )

    @server.tool()
    def open_nodes(names: list[str]) -> str:
        """Entities by name, with the relations between them."""
        mz = _client()
        found: list[dict[str, Any]] = []
        for name in names:
            try:
                found.append(dict(mz.frame(to_frame_id(name))))
            except MorphzAPIError:
                continue
        ids = {f["id"] for f in found}
        return _dump(
            {
                "entities": [_entity(f) for f in found],
                "relations": _call(lambda: _relations_between(mz, ids)),
            }
        )


def main() -> None:
    """stdio server: MORPHZ_URL (default http://127.0.0.1:8000), MORPHZ_TOKEN,
    MORPHZ_CONTEXT (optional: the token's own context by default)."""
    token = os.environ.get("MORPHZ_TOKEN")
    if not token:
        raise SystemExit("set MORPHZ_TOKEN to a context's API token")
    url = os.environ.get("MORPHZ_URL", "http://127.0.0.1:8000")
    client = MorphzClient(url, token, context=os.environ.get("MORPHZ_CONTEXT") or None)
    current_client.set(client)
    build_server().run("stdio")


if __name__ == "__main__":
    main()
