"""The reference memory graph of one context, as the `server-memory` tools see it (R66).

Entities are frames whose body is `{name, entityType, observations}`, relations are Morphz
relations between them. `Graph` reads this process's up-to-date copy of the context
(`morphz_client.mcp_snapshot`) and commits planned operations against its version, retrying
when a concurrent writer got there first; `morphz_client.mcp_reference` builds the nine
tools on it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeGuard, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from morphz_client.client import MorphzClient
from morphz_client.errors import ConflictError, MorphzAPIError, TooLargeError
from morphz_client.mcp_calls import tool_call
from morphz_client.mcp_names import NameProblem, entity_frame_id, legacy_frame_id, relation_name
from morphz_client.mcp_names import relation_type as type_of_relation
from morphz_client.mcp_snapshot import snapshot_of

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


def is_entity(body: Any) -> TypeGuard[dict[str, Any]]:
    """True when a frame body is an entity: exactly `{name, entityType, observations}`, two strings and a list of strings, in that order."""
    return (
        isinstance(body, dict)
        and tuple(body) == ENTITY_KEYS
        and isinstance(body["name"], str)
        and isinstance(body["entityType"], str)
        and isinstance(body["observations"], list)
        and all(isinstance(o, str) for o in body["observations"])
    )


def entity_of(body: dict[str, Any]) -> dict[str, Any]:
    """The reference entity `{name, entityType, observations}` of an entity frame body."""
    return {k: body[k] for k in ENTITY_KEYS}


def frame_op(op: str, frame_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """A transaction op on one frame (`derive`, `revise`) with its body."""
    return {"op": op, "id": frame_id, "body": body}


def edge_op(op: str, subject: str, name: str, obj: str) -> dict[str, Any]:
    """A transaction op on one relation (`relate`, `unrelate`) between two frame ids."""
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
            yield tool_call(lambda: self.snap.refresh(self.mz, pages))

    # -- reads (with the copy held current) ------------------------------------------------

    def lookup(self, name: str) -> tuple[str, dict[str, Any] | None]:
        """The frame id for `name` and its frame (`status`, `body`; None if none was ever
        created). Checks the stored name, so a digest collision is refused rather than
        merged; an entity of the earlier mapping (`legacy_frame_id`) is found too."""
        frame_id = entity_frame_id(name)
        frame = self.snap.frames.get(frame_id)
        if frame is not None:
            body = frame.get("body")
            if not (is_entity(body) and body["name"] == name):
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
            and is_entity(old.get("body"))
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
            (frame_id, entity_of(frame["body"]))
            for frame_id, frame in sorted(self.snap.frames.items())
            if frame["status"] == "active" and is_entity(frame.get("body"))
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
        if frame is None or frame["status"] != "active" or not is_entity(frame.get("body")):
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
                    raise tool_error(exc) from None
                for error in errors:
                    if error.get("code") in ("relation_exists", "unknown_relation"):
                        self.settled.add(relation_key(ops[error["index"]]))
                continue
            time.sleep(random.uniform(0, 0.01 * min(attempt + 1, 10)))
        raise ToolError(
            f"{reason}: other writers kept changing these entities ({MAX_ATTEMPTS} attempts); "
            "nothing was changed, call again"
        )


def relation_key(op: dict[str, Any]) -> tuple[str, str, str]:
    """(subject, name, object) of a relate/unrelate op, as `Graph.settled` keeps it."""
    return (op["subject"], op["name"], op["object"])


def tool_error(exc: MorphzAPIError) -> ToolError:
    """The API error as a tool error: `code: message` and its details as JSON."""
    details = f" details: {json.dumps(exc.details, ensure_ascii=False)}" if exc.details else ""
    return ToolError(f"{exc.code}: {exc.message}{details}")


def pages(fetch: Callable[[str | None, int], Any], key: str = "frames") -> Iterator[dict[str, Any]]:
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
            raise tool_error(exc) from None
        yield from page[key]
        cursor = page["next_cursor"]
        if cursor is None:
            return


def checked_relation_name(relation_type: str) -> str:
    """The Morphz relation name of a reference relationType; ToolError when it has none."""
    try:
        return relation_name(relation_type)
    except NameProblem as exc:
        raise ToolError(str(exc)) from None


# --------------------------------------------------------------------------- reads


def _matches(entity: dict[str, Any], query: str) -> bool:
    # The reference compares JavaScript's toLowerCase(); Python's lower() agrees on it
    # (final sigma included) for the text the differential test sends.
    q = query.lower()
    return (
        q in entity["name"].lower()
        or q in entity["entityType"].lower()
        or any(q in o.lower() for o in entity["observations"])
    )


def read_graph_page(graph: Graph, limit: int | None, cursor: str | None) -> dict[str, Any]:
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


def search_nodes_of(graph: Graph, query: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Live entities whose name, type or an observation contains `query` (case folded),
    and every relation touching them, as reference shapes."""
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


def open_nodes_of(
    graph: Graph, names: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The live entities named (each once, unknown names skipped) and every relation
    touching them, as reference shapes."""
    found: list[tuple[str, dict[str, Any]]] = []
    for name in dict.fromkeys(names):
        hit = graph.live(name)
        if hit is not None:
            found.append((hit[0], entity_of(hit[1]["body"])))
    return [e for _, e in found], graph.touching([fid for fid, _ in found])
