"""The working copy a transaction is applied to, and what a commit must check first.

`FrameState`, `EventState` and `RelationState` are the rows a transaction touches, loaded by
the engine (`memory.tx.loader.SqlLoader`) or, in tests, by an in-memory `StateLoader`.
`referenced_items` lists what a transaction names; `find_conflicts` says which of those
changed after its base version (R20).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.errors import ErrorCode
from memory.kinds import ACTIVE, RETIRING
from memory.shapes.rejections import ChangedItem, FailedOperation
from memory.shapes.results import OpResult
from memory.vocabulary import event_ref, seq_of

SUPERSEDES = "supersedes"


@dataclass
class FrameState:
    frame_id: str
    revision: int
    body: Any
    sources: list[str]
    status: str
    protected: bool
    retire_requested_tick: int | None
    retire_due_tick: int | None
    retire_reason: str | None
    retire_generation: int
    token_estimate: int
    created_version: int
    changed_version: int
    pk: int | None = None  # None until the engine inserts it
    # What this transaction did to it, for the writer.
    created: bool = False
    revised: bool = False
    touched: bool = False
    retire_requested: bool = False  # a new request (new generation) was opened
    retire_cancelled: bool = False  # the request pending when loaded was cancelled
    retire_opened_cancelled: bool = False  # so was the request this transaction opened
    retire_completed_early: bool = False
    original_status: str = ACTIVE

    @property
    def in_input(self) -> bool:
        """Active or retiring: the frame is in the model's input (R14, R23)."""
        return self.status in (ACTIVE, RETIRING)


@dataclass
class EventState:
    seq: int
    kind: str
    is_observation: bool
    active: bool
    request_state: str | None
    token_estimate: int
    status_version: int
    pk: int
    touched: bool = False


@dataclass(frozen=True)
class RelationKey:
    subject: str
    name: str
    object: str


@dataclass
class RelationState:
    key: RelationKey
    live: bool
    changed_version: int  # last version at which it was created or removed
    pk: int | None = None
    created: bool = False
    removed: bool = False


class StateLoader(Protocol):
    """What the rules may still need to read while applying (the engine preloads the rest)."""

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        """The current state of those frames, by id; an unknown id is absent."""
        ...

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]:
        """The live `supersedes` relations whose object is one of `object_ids` (R17)."""
        ...


@dataclass
class OpError:
    index: int
    op: str
    code: ErrorCode
    message: str
    ref: str | None = None

    def as_dict(self) -> FailedOperation:
        """`{index, op, code, message, ref?}`: one entry of a rejection's `errors` (R11)."""
        data: FailedOperation = {
            "index": self.index,
            "op": self.op,
            "code": self.code,
            "message": self.message,
        }
        if self.ref is not None:
            data["ref"] = self.ref
        return data


@dataclass
class ConflictItem:
    ref: str
    kind: str  # frame | event | relation
    changed_version: int
    revision: int | None = None
    status: str | None = None

    def as_dict(self) -> ChangedItem:
        """`{ref, kind, changed_version, revision?, status?}`: one item of a `conflict`
        rejection's details (R20); versions are context versions."""
        data: ChangedItem = {
            "ref": self.ref,
            "kind": self.kind,
            "changed_version": self.changed_version,
        }
        if self.revision is not None:
            data["revision"] = self.revision
        if self.status is not None:
            data["status"] = self.status
        return data


@dataclass
class ApplyOutcome:
    frames: dict[str, FrameState]
    events: dict[int, EventState]
    relations: dict[RelationKey, RelationState]
    results: list[OpResult]
    errors: list[OpError]
    token_delta: int = 0
    released_tokens: int = 0
    completed_by_successor: list[str] = field(default_factory=list)
    retiring_named: set[str] = field(default_factory=set)  # a repeated retire's frames


def referenced_items(ops: list[dict[str, Any]]) -> tuple[set[str], set[int], set[RelationKey]]:
    """Every frame id, event seq and relation a transaction names explicitly (R20)."""
    frame_ids: set[str] = set()
    seqs: set[int] = set()
    relations: set[RelationKey] = set()

    def add_ref(ref: str) -> None:
        seq = seq_of(ref)
        if seq is None:
            frame_ids.add(ref)
        else:
            seqs.add(seq)

    for op in ops:
        kind = op["op"]
        if kind in ("derive", "revise"):
            frame_ids.add(op["id"])
            for ref in op.get("from", []):
                add_ref(ref)
        elif kind in ("relate", "unrelate"):
            frame_ids.update((op["subject"], op["object"]))
            relations.add(RelationKey(op["subject"], op["name"], op["object"]))
        elif kind == "retire":
            for ref in op["refs"]:
                add_ref(ref)
        else:
            for ref in op["ids"]:
                add_ref(ref)
    return frame_ids, seqs, relations


def find_conflicts(
    base_version: int,
    frames: dict[str, FrameState],
    events: dict[int, EventState],
    relations: dict[RelationKey, RelationState],
) -> list[ConflictItem]:
    """Items the transaction names that changed after its base version (R20), frames by
    id, then events by seq, then relations; empty when it may commit. Reads nothing."""
    conflicts: list[ConflictItem] = []
    for frame_id in sorted(frames):
        frame = frames[frame_id]
        if frame.changed_version > base_version:
            conflicts.append(
                ConflictItem(frame_id, "frame", frame.changed_version, frame.revision, frame.status)
            )
    for seq in sorted(events):
        event = events[seq]
        if event.status_version > base_version:
            status = "active" if event.active else "retired"
            conflicts.append(
                ConflictItem(event_ref(seq), "event", event.status_version, None, status)
            )
    for key in sorted(relations, key=lambda k: (k.subject, k.name, k.object)):
        relation = relations[key]
        if relation.changed_version > base_version:
            conflicts.append(
                ConflictItem(
                    f"{key.subject} {key.name} {key.object}",
                    "relation",
                    relation.changed_version,
                    None,
                    "live" if relation.live else "removed",
                )
            )
    return conflicts
