"""LangGraph's long-term memory store on Morphz frames (R67): `MorphzStore(client)`.

How it works: docs/internals.md, section `client/morphz_client/langgraph.py`."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeGuard

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from morphz_client.client import MorphzClient
from morphz_client.errors import NotFoundError, RuleViolationError

__all__ = ["MorphzStore", "frame_id_of"]

STORE_MARK = "langgraph"
_PREFIX = "lg-"
_READABLE_MAX = 64
_NOT_ID = re.compile(r"[^a-z0-9_-]+")
# A transaction holds at most 500 operations (docs/transactions.md); a put may need two.
_OPS_PER_TRANSACTION = 240
_FRAME_PAGE = 500
_SEARCH_PAGE = 100
# How many pages of Morphz search hits a query reads at most (100 each).
_SEARCH_PAGES = 20


def frame_id_of(namespace: tuple[str, ...], key: str) -> str:
    """The frame id of item `(namespace, key)`: stable, and different for every different pair
    (the digest covers the exact labels and key; the readable part is only a label)."""
    exact = json.dumps([list(namespace), key], ensure_ascii=True, separators=(",", ":"))
    digest = hashlib.sha256(exact.encode("ascii")).hexdigest()[:32]
    readable = _NOT_ID.sub("-", ".".join((*namespace, key)).lower()).strip("-.")
    readable = readable[:_READABLE_MAX].rstrip("-.")
    return f"{_PREFIX}{readable}-{digest}" if readable else f"{_PREFIX}{digest}"


def _readable(value: Any) -> Any:
    """`value` with strings, lists and maps kept and every other JSON scalar as its JSON text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(k): _readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_readable(v) for v in value]
    return json.dumps(value)


def _body(namespace: tuple[str, ...], key: str, value: dict[str, Any], now: str) -> dict[str, Any]:
    shown = _readable(value)
    body: dict[str, Any] = {
        "store": STORE_MARK,
        "namespace": list(namespace),
        "key": key,
        "value": shown,
        "updated_at": now,
    }
    # Exactness: a value that does not read back as itself keeps its JSON beside it.
    if shown != value or _has_tuple(value):
        body["value_json"] = json.dumps(value, ensure_ascii=False)
    return body


def _has_tuple(value: Any) -> bool:
    if isinstance(value, tuple):
        return True
    if isinstance(value, dict):
        return any(_has_tuple(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_tuple(v) for v in value)
    return False


def _is_item_body(body: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(body, dict)
        and body.get("store") == STORE_MARK
        and isinstance(body.get("namespace"), list)
        and isinstance(body.get("key"), str)
        and isinstance(body.get("value"), dict)
    )


def _item_parts(body: dict[str, Any]) -> tuple[tuple[str, ...], str, dict[str, Any], datetime]:
    value = json.loads(body["value_json"]) if "value_json" in body else body["value"]
    when = datetime.fromisoformat(body["updated_at"])
    return tuple(body["namespace"]), body["key"], value, when


def _item(body: dict[str, Any]) -> Item:
    namespace, key, value, when = _item_parts(body)
    return Item(value=value, key=key, namespace=namespace, created_at=when, updated_at=when)


def _search_item(body: dict[str, Any], score: float | None = None) -> SearchItem:
    namespace, key, value, when = _item_parts(body)
    return SearchItem(namespace, key, value, when, when, score)


def _matches(item_value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (as its InMemoryStore and PostgresStore apply them)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(item_value, op, arg) for op, arg in wanted.items())
        if not isinstance(item_value, dict):
            return False
        return all(_matches(item_value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(item_value, list | tuple)
            and len(item_value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(item_value, wanted, strict=True))
        )
    return bool(item_value == wanted)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    order = {"$gt": 1, "$gte": 0, "$lt": -1, "$lte": 0}
    if op not in order:
        raise ValueError(f"Unsupported operator: {op}")
    if value is None:
        return False
    left, right = float(value), float(arg)
    if op == "$gt":
        return left > right
    if op == "$gte":
        return left >= right
    if op == "$lt":
        return left < right
    return left <= right


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)


class MorphzStore(BaseStore):
    """A LangGraph `BaseStore` whose items are frames of one Morphz context (see the module
    docstring for the mapping). Sync methods make HTTP requests through `client`; the async
    ones run them in a worker thread.

    >>> store = MorphzStore(MorphzClient(url, token))
    >>> store.put(("users", "ada"), "prefs", {"theme": "dark"})
    >>> store.get(("users", "ada"), "prefs").value
    {'theme': 'dark'}"""

    supports_ttl = False

    def __init__(self, client: MorphzClient, *, thread: str | None = None) -> None:
        """`thread`: the Morphz thread the store's transactions are recorded on (default main)."""
        self.client = client
        self.thread = thread

    # -- the one entry point -------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops` in order as LangGraph's stores do: reads answer from the state before the
        batch's writes; the writes (the last one per item wins) commit as one transaction."""
        ops = list(ops)
        results: list[Result] = []
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                writes.pop((op.namespace, op.key), None)
                writes[(op.namespace, op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        if writes:
            self._write(list(writes.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` in a worker thread (the client is synchronous)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- reads ---------------------------------------------------------------------------

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        try:
            frame = self.client.frame(frame_id_of(namespace, key), history_limit=1)
        except NotFoundError:
            return None
        body = frame.get("body")
        if frame.get("status") != "active" or not _is_item_body(body):
            return None
        item = _item(body)
        # The digest names the pair; a body naming another pair is not this item.
        return item if (item.namespace, item.key) == (tuple(namespace), key) else None

    def _items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every live item's frame id and body, by frame id."""
        cursor = None
        while True:
            page = self.client.frames(status="active", cursor=cursor, limit=_FRAME_PAGE)
            for frame in page["frames"]:
                if frame["id"].startswith(_PREFIX) and _is_item_body(frame.get("body")):
                    yield frame["id"], frame["body"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)

        def wanted(body: dict[str, Any]) -> bool:
            """Whether the item of `body` lies under the prefix and matches the filter."""
            namespace, _key, value, _when = _item_parts(body)
            if namespace[: len(prefix)] != prefix:
                return False
            return all(_matches(value.get(k), v) for k, v in (op.filter or {}).items())

        if op.query:
            return self._query(op, wanted)
        found = [_search_item(body) for _id, body in self._items() if wanted(body)]
        found.sort(key=lambda item: (-item.updated_at.timestamp(), item.namespace, item.key))
        return found[op.offset : op.offset + op.limit]

    def _query(self, op: SearchOp, wanted: Any) -> list[SearchItem]:
        """Morphz search's frame hits for the words of `op.query`, best first, kept when they
        are items that pass the prefix and filter."""
        assert op.query is not None
        kept: list[SearchItem] = []
        offset: int | None = 0
        for _ in range(_SEARCH_PAGES):
            if offset is None or len(kept) >= op.offset + op.limit:
                break
            page = self.client.search(
                op.query, type="frame", status="active", limit=_SEARCH_PAGE, offset=offset
            )
            for hit in page["hits"]:
                frame_id = hit.get("id")
                if not isinstance(frame_id, str) or not frame_id.startswith(_PREFIX):
                    continue
                try:
                    frame = self.client.frame(frame_id, history_limit=1)
                except NotFoundError:
                    continue
                body = frame.get("body")
                if frame.get("status") == "active" and _is_item_body(body) and wanted(body):
                    kept.append(_search_item(body, float(hit["score"])))
            offset = page.get("next_offset")
        return kept[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = {tuple(body["namespace"]) for _id, body in self._items()}
        chosen = [
            ns
            for ns in namespaces
            if all(_namespace_matches(c, ns) for c in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            chosen = list({ns[: op.max_depth] for ns in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # -- writes --------------------------------------------------------------------------

    def _write(self, puts: list[PutOp]) -> None:
        for start in range(0, len(puts), _OPS_PER_TRANSACTION):
            self._commit(puts[start : start + _OPS_PER_TRANSACTION])

    def _commit(self, puts: list[PutOp]) -> None:
        """One transaction for `puts`. Each put is first sent as a revise (or a retire for a
        delete); the rejection names each operation that needs another form (a frame not yet
        derived, one retired, a delete of nothing), and the transaction is sent again so."""
        now = datetime.now(UTC).isoformat()
        plans: list[list[dict[str, Any]]] = []
        for put in puts:
            frame_id = frame_id_of(put.namespace, put.key)
            if put.value is None:
                plans.append([{"op": "retire", "refs": [frame_id]}])
            else:
                body = _body(put.namespace, put.key, dict(put.value), now)
                plans.append([{"op": "revise", "id": frame_id, "body": body}])
        for _attempt in range(4):
            ops = [op for plan in plans for op in plan]
            if not ops:
                return
            try:
                self.client.submit(ops=ops, reason=_reason(puts), thread=self.thread)
                return
            except RuleViolationError as exc:
                owners = [i for i, plan in enumerate(plans) for _op in plan]
                if not _replan(plans, owners, exc):
                    raise
        raise RuntimeError("the store's transaction was refused four times")  # pragma: no cover


def _replan(plans: list[list[dict[str, Any]]], owners: list[int], exc: RuleViolationError) -> bool:
    """Change each plan the rejection names into the form its frame needs; False when a
    failure is not one the store answers by another form."""
    changed = False
    for detail in exc.details:
        index = detail.get("index") if isinstance(detail, dict) else None
        if not isinstance(index, int) or not 0 <= index < len(owners):
            return False
        plan = plans[owners[index]]
        write = plan[-1]
        code = detail.get("code")
        if write["op"] == "retire" and code == "unknown_ref":
            plan.clear()  # deleting an item that never was: nothing to do
        elif write["op"] == "revise" and code == "unknown_ref":
            plan[:] = [{**write, "op": "derive"}]
        elif write["op"] == "derive" and code == "frame_exists":
            plan[:] = [{**write, "op": "revise"}]
        elif write["op"] == "revise" and code == "frame_retired":
            plan[:] = [{"op": "restore", "ids": [write["id"]]}, write]
        else:
            return False
        changed = True
    return changed


def _reason(puts: list[PutOp]) -> str:
    deleted = sum(1 for p in puts if p.value is None)
    return f"langgraph store: {len(puts) - deleted} put, {deleted} deleted"
