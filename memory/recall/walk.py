"""The breadth-first walk of graph recall as resumable state, so a cursor continues the walk
instead of redoing it.

How it works: docs/internals.md, section `memory/recall/walk.py`."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from memory.sql import named_rows, statements
from memory.vocabulary import event_ref, seq_of

Key = tuple[str, int]
PARENT_BATCH = 128
MAX_STATES = 64


@dataclass
class Found:
    """What a walk has found: its nodes in walk order with their depth, and the frames' ids
    and sources (kept in this process by `WalkState`, or read for one page by `rows.Walk`)."""

    order: list[Key] = field(default_factory=list)
    depth: dict[Key, int] = field(default_factory=dict)
    frame_id: dict[int, str] = field(default_factory=dict)
    sources: dict[int, list[Any]] = field(default_factory=dict)
    pk_by_id: dict[str, int] = field(default_factory=dict)


@dataclass(kw_only=True)
class WalkState(Found):
    direction: str  # ancestors, descendants or both
    max_depth: int
    next_parent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def ancestors(self) -> bool:
        """Whether the walk follows sources and outgoing relations."""
        return self.direction in ("ancestors", "both")

    @property
    def descendants(self) -> bool:
        """Whether the walk follows citing frames and incoming relations."""
        return self.direction in ("descendants", "both")

    @property
    def finished(self) -> bool:
        """Whether every node found so far has been expanded (the walk is complete)."""
        return self.next_parent >= len(self.order)

    def add(self, key: Key, depth: int) -> None:
        """Add a node at `depth` unless the walk has already found it (each node comes once)."""
        if key not in self.depth:
            self.depth[key] = depth
            self.order.append(key)

    def load_frames(self, pks: list[int]) -> None:
        """frame_id and sources of these frames, for those not known yet (one query)."""
        missing = [pk for pk in pks if pk not in self.frame_id]
        if not missing:
            return
        with connection.cursor() as cursor:
            cursor.execute(statements("memory.recall")["walk_frames"], [missing])
            rows = named_rows(cursor)
        for row in rows:
            pk, fid = row["id"], row["frame_id"]
            self.frame_id[pk] = fid
            self.pk_by_id[fid] = pk
            self.sources[pk] = json.loads(row["sources"]) or []

    def walk_until(self, context_pk: int, count: int, expanded: int = 0) -> None:
        """Expand parents until `count` nodes are known and the first `expanded` nodes are
        expanded, or the walk is over. Pages ask for their own nodes to be expanded too, so
        expansion keeps pace with paging and the last page does not inherit the expansion of
        every node before it (a node near the end of a level may be the only way to learn
        that nothing follows it)."""
        while (len(self.order) < count or self.next_parent < expanded) and not self.finished:
            batch = self.order[self.next_parent : self.next_parent + PARENT_BATCH]
            self.next_parent += len(batch)
            if batch[0][0] == "e" and self.depth[batch[0]] == 0 and self.descendants:
                self._expand_event(context_pk, batch[0])
            parents = [k for k in batch if k[0] == "f" and self.depth[k] < self.max_depth]
            if parents:
                self._expand(context_pk, parents)

    def _expand(self, context_pk: int, parents: list[Key]) -> None:
        """Add the parents' neighbours, in walk order (sources as written, outgoing relations,
        citing frames, incoming relations), one level below each parent."""
        pks = [pk for _, pk in parents]
        out_rel, in_rel, citing = self._neighbours(context_pk, pks)
        source_pks = self._source_pks(context_pk, pks) if self.ancestors else {}
        for key in parents:
            pk = key[1]
            level = self.depth[key] + 1
            if self.ancestors:
                for ref in self.sources[pk]:
                    if not isinstance(ref, str):
                        continue
                    seq = seq_of(ref)
                    if seq is not None:
                        self.add(("e", seq), level)
                        continue
                    other = self.pk_by_id.get(ref) or source_pks.get(ref)
                    if other is not None:
                        self.add(("f", other), level)
                for _, other in sorted(out_rel.get(pk, [])):
                    self.add(("f", other), level)
            if self.descendants:
                for other in citing.get(self.frame_id[pk], []):
                    self.add(("f", other), level)
                for _, other in sorted(in_rel.get(pk, [])):
                    self.add(("f", other), level)

    def _expand_event(self, context_pk: int, root: Key) -> None:
        """Add the frames citing the root event (by id), one level below it: the only event
        the walk expands (an event has no sources; every other event is a leaf)."""
        with connection.cursor() as cursor:
            cursor.execute(
                statements("memory.recall")["frames_citing"], [context_pk, event_ref(root[1])]
            )
            for (pk,) in cursor.fetchall():
                self.add(("f", pk), 1)

    def _neighbours(
        self, context_pk: int, pks: list[int]
    ) -> tuple[
        dict[int, list[tuple[int, int]]], dict[int, list[tuple[int, int]]], dict[str, list[int]]
    ]:
        """Read the parents' own rows (kept on the state) and their relations and citing
        frames: `(outgoing, incoming)` as `(relation id, other pk)` by parent pk, and the
        citing frames' pks by cited frame id."""
        missing = [pk for pk in pks if pk not in self.frame_id]
        out_rel: dict[int, list[tuple[int, int]]] = {}
        in_rel: dict[int, list[tuple[int, int]]] = {}
        citing_rows: list[tuple[int, str]] = []
        # One round trip for the parents' own rows and every neighbour but sources.
        params: dict[str, Any] = {"missing": missing, "pks": pks, "ctx": context_pk}
        with connection.cursor() as cursor:
            cursor.execute(statements("memory.recall")[f"expand_{self.direction}"], params)
            rows = named_rows(cursor)
        for row in rows:
            tag, pk, sources = row["tag"], row["pk"], row["sources"]
            fid, other, rel_id = row["frame_id"], row["other"], row["relation"]
            if tag == "p":
                self.frame_id[pk] = fid
                self.pk_by_id[fid] = pk
                self.sources[pk] = json.loads(sources) or []
            elif tag == "o":
                out_rel.setdefault(pk, []).append((rel_id, other))
            elif tag == "i":
                in_rel.setdefault(pk, []).append((rel_id, other))
            else:
                citing_rows.append((pk, sources))
        citing: dict[str, list[int]] = {}
        if citing_rows:
            wanted = {self.frame_id[pk] for pk in pks}
            for pk, sources in sorted(citing_rows):
                for ref in json.loads(sources) or []:
                    if isinstance(ref, str) and ref in wanted:
                        citing.setdefault(ref, []).append(pk)
        return out_rel, in_rel, citing

    def _source_pks(self, context_pk: int, pks: list[int]) -> dict[str, int]:
        """The pks of the frames the parents' sources name that the walk has not seen yet."""
        unknown = {
            ref
            for pk in pks
            for ref in self.sources[pk]
            if isinstance(ref, str) and seq_of(ref) is None and ref not in self.pk_by_id
        }
        if not unknown:
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                statements("memory.recall")["frames_by_frame_id"], [context_pk, list(unknown)]
            )
            return {row["frame_id"]: row["id"] for row in named_rows(cursor)}


_states: OrderedDict[tuple[Any, ...], WalkState] = OrderedDict()
_states_lock = threading.Lock()


def state_for(key: tuple[Any, ...], root: Key, direction: str, max_depth: int) -> WalkState:
    """The walk for this (context, version, query) key: the one in progress, or a new one
    from `root` (a frame, or an event whose citing frames follow it)."""
    with _states_lock:
        state = _states.get(key)
        if state is not None:
            _states.move_to_end(key)
            return state
        state = WalkState(direction=direction, max_depth=max_depth)
        state.add(root, 0)
        _states[key] = state
        while len(_states) > MAX_STATES:
            _states.popitem(last=False)
        return state


def forget_all() -> None:
    """Drop every walk in progress (tests)."""
    with _states_lock:
        _states.clear()
