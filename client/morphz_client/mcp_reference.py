"""The reference `server-memory` tool names on Morphz, for agents configured for it.

An entity is a frame (its id from its name), its observations a list in the frame's body, a
relation a named relation; every change is a context transaction. Each reply's `morphz`
field says what differs from the reference server (for example: a deleted entity retires in
two steps, with its due tick).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from morphz_client.client import MorphzClient
from morphz_client.errors import MorphzAPIError
from morphz_client.mcp_server import _all_frames, _call, _client, _commit, _dump, _quote

__all__ = ["add_reference_tools", "to_frame_id"]

DIFFERENCE_RETIRE = (
    "Morphz keeps history: a deleted entity is retired in two steps (retiring now, retired at "
    "its due tick; revise or restore cancels), and its frame id is never reused."
)


_ID_BAD = re.compile(r"[^a-z0-9._-]+")


def to_frame_id(name: str) -> str:
    """A frame id for a reference-server entity name: lower-case, other characters as `-`."""
    frame_id = _ID_BAD.sub("-", name.strip().lower()).strip("-._")
    if not frame_id:
        raise ToolError(f"entity name {name!r} has no letters or digits to make a frame id")
    return frame_id[:128]


def _relation_name(name: str) -> str:
    return to_frame_id(name)


def _entity_body(name: str, entity_type: str, observations: list[str]) -> dict[str, Any]:
    return {"name": name, "entityType": entity_type, "observations": observations}


def _field_text(key: str, value: Any) -> str:
    if isinstance(value, list):
        return f"({key} [" + " ".join(_quote(str(v)) for v in value) + "])"
    return f"({key} {_quote(str(value))})"


def _body_text(body: dict[str, Any]) -> str:
    return " ".join(_field_text(k, v) for k, v in body.items())


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


# long: one closure per reference tool, registered on `server`; each is short and reads alone
def add_reference_tools(server: MCPServer) -> None:
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
