"""Applying a context transaction's operations to a working copy of the cognitive state.

Plain Python (R10–R17, R20): the engine loads what the transaction references through a
`StateLoader`, this module decides every rule, and the engine writes the outcome. Tests can
drive it with an in-memory loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.kinds import ACTIVE, REQUEST_OPEN, RETIRED, RETIRING
from memory.tokens import estimate_frame_tokens
from memory.tx.retirement import due_tick_for

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
    retire_cancelled: bool = False
    retire_completed_early: bool = False
    original_status: str = ACTIVE

    @property
    def in_input(self) -> bool:
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

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]: ...

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]: ...


@dataclass
class OpError:
    index: int
    op: str
    code: str
    message: str
    ref: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
    results: list[dict[str, Any]]
    errors: list[OpError]
    token_delta: int = 0
    released_tokens: int = 0
    completed_by_successor: list[str] = field(default_factory=list)


def _event_seq(ref: str) -> int | None:
    if ref.startswith("@e") and ref[2:].isdigit():
        return int(ref[2:])
    return None


def referenced_items(ops: list[dict[str, Any]]) -> tuple[set[str], set[int], set[RelationKey]]:
    """Every frame id, event seq and relation a transaction names explicitly (R20)."""
    frame_ids: set[str] = set()
    seqs: set[int] = set()
    relations: set[RelationKey] = set()

    def add_ref(ref: str) -> None:
        seq = _event_seq(ref)
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
    """Items the transaction names that changed after its base version (R20)."""
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
            conflicts.append(ConflictItem(f"@e{seq}", "event", event.status_version, None, status))
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


class TransactionApplier:
    """Applies operations in order; a later operation sees the earlier ones (R10)."""

    def __init__(
        self,
        loader: StateLoader,
        *,
        tick: int,
        grace_ticks: int,
        new_version: int,
        reason: str,
        frames: dict[str, FrameState],
        events: dict[int, EventState],
        relations: dict[RelationKey, RelationState],
    ) -> None:
        self.loader = loader
        self.tick = tick
        self.grace_ticks = grace_ticks
        self.new_version = new_version
        self.reason = reason
        self.frames = frames
        self.events = events
        self.relations = relations
        self.results: list[dict[str, Any]] = []
        self.errors: list[OpError] = []
        self.token_delta = 0
        self.released_tokens = 0

    # -- helpers -------------------------------------------------------------------------

    def _fail(self, index: int, op: str, code: str, message: str, ref: str | None = None) -> None:
        self.errors.append(OpError(index, op, code, message, ref))

    def _frame(self, frame_id: str) -> FrameState | None:
        return self.frames.get(frame_id)

    def _existing_frame(self, index: int, op: str, frame_id: str) -> FrameState | None:
        """The frame, or None after recording `unknown_ref` for operation `index`."""
        frame = self.frames.get(frame_id)
        if frame is None:
            self._fail(
                index,
                op,
                "unknown_ref",
                f"frame {frame_id!r} does not exist in this context",
                frame_id,
            )
        return frame

    def _touch(self, frame: FrameState) -> None:
        frame.touched = True
        frame.changed_version = self.new_version

    def _resolve_source(self, index: int, op: str, ref: str) -> bool:
        seq = _event_seq(ref)
        if seq is not None:
            if seq not in self.events:
                self._fail(
                    index, op, "unknown_ref", f"event {ref} does not exist in this context", ref
                )
                return False
            return True
        if ref not in self.frames:
            self._fail(
                index, op, "unknown_ref", f"frame {ref!r} does not exist in this context", ref
            )
            return False
        return True

    def _set_status(self, frame: FrameState, status: str) -> None:
        was_in = frame.in_input
        frame.status = status
        if was_in and not frame.in_input:
            self.token_delta -= frame.token_estimate
            self.released_tokens += frame.token_estimate
        elif not was_in and frame.in_input:
            self.token_delta += frame.token_estimate

    def _cancel_window(self, frame: FrameState) -> None:
        if frame.status == RETIRING:
            frame.retire_cancelled = True
            frame.retire_requested_tick = None
            frame.retire_due_tick = None
            frame.retire_reason = None
            self._set_status(frame, ACTIVE)

    # -- operations ----------------------------------------------------------------------

    def apply(self, ops: list[dict[str, Any]]) -> ApplyOutcome:
        for index, op in enumerate(ops):
            handler = getattr(self, f"_op_{op['op']}")
            errors_before = len(self.errors)
            result = handler(index, op)
            if len(self.errors) == errors_before:
                self.results.append(result)
            else:
                self.results.append({"op": op["op"], "error": True})
        completed = self._apply_successor_rule() if not self.errors else []
        return ApplyOutcome(
            frames=self.frames,
            events=self.events,
            relations=self.relations,
            results=self.results,
            errors=self.errors,
            token_delta=self.token_delta,
            released_tokens=self.released_tokens,
            completed_by_successor=completed,
        )

    def _op_derive(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        frame_id = op["id"]
        existing = self._frame(frame_id)
        if existing is not None:
            self._fail(
                index,
                "derive",
                "frame_exists",
                f"frame {frame_id!r} already exists (status {existing.status}, revision "
                f"{existing.revision}); ids are unique forever: revise it or pick another id",
                frame_id,
            )
            return {}
        sources = list(dict.fromkeys(op.get("from", [])))
        if frame_id in sources:
            self._fail(
                index, "derive", "unknown_ref", f"frame {frame_id!r} cannot cite itself", frame_id
            )
            return {}
        if not all(self._resolve_source(index, "derive", ref) for ref in sources):
            return {}
        tokens = estimate_frame_tokens(frame_id, op["body"], sources)
        self.frames[frame_id] = FrameState(
            frame_id=frame_id,
            revision=1,
            body=op["body"],
            sources=sources,
            status=ACTIVE,
            protected=False,
            retire_requested_tick=None,
            retire_due_tick=None,
            retire_reason=None,
            retire_generation=0,
            token_estimate=tokens,
            created_version=self.new_version,
            changed_version=self.new_version,
            created=True,
            touched=True,
            revised=True,
            original_status=ACTIVE,
        )
        self.token_delta += tokens
        return {"op": "derive", "id": frame_id, "revision": 1, "status": ACTIVE, "tokens": tokens}

    def _op_revise(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        frame_id = op["id"]
        frame = self._frame(frame_id)
        if frame is None:
            self._fail(
                index,
                "revise",
                "unknown_ref",
                f"frame {frame_id!r} does not exist; derive it first",
                frame_id,
            )
            return {}
        if frame.status == RETIRED:
            self._fail(
                index,
                "revise",
                "frame_retired",
                f"frame {frame_id!r} is retired; restore it first (restore then revise may "
                "stand in the same transaction)",
                frame_id,
            )
            return {}
        new_sources = [s for s in dict.fromkeys(op.get("from", [])) if s not in frame.sources]
        if frame_id in new_sources:
            self._fail(
                index, "revise", "unknown_ref", f"frame {frame_id!r} cannot cite itself", frame_id
            )
            return {}
        if not all(self._resolve_source(index, "revise", ref) for ref in new_sources):
            return {}
        cancelled = frame.status == RETIRING
        self._cancel_window(frame)
        frame.sources = frame.sources + new_sources
        frame.body = op["body"]
        frame.revision += 1
        frame.revised = True
        old_tokens = frame.token_estimate
        frame.token_estimate = estimate_frame_tokens(frame_id, frame.body, frame.sources)
        self.token_delta += frame.token_estimate - old_tokens
        self._touch(frame)
        result = {
            "op": "revise",
            "id": frame_id,
            "revision": frame.revision,
            "status": frame.status,
            "tokens": frame.token_estimate,
        }
        if cancelled:
            result["retirement_cancelled"] = True
        return result

    def _relation_endpoints(self, index: int, op: dict[str, Any]) -> bool:
        ok = True
        for end in (op["subject"], op["object"]):
            if end not in self.frames:
                self._fail(
                    index,
                    op["op"],
                    "unknown_ref",
                    f"frame {end!r} does not exist in this context",
                    end,
                )
                ok = False
        return ok

    def _op_relate(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        if not self._relation_endpoints(index, op):
            return {}
        key = RelationKey(op["subject"], op["name"], op["object"])
        relation = self.relations.get(key)
        if relation is not None and relation.live:
            self._fail(
                index,
                "relate",
                "relation_exists",
                f"relation {key.subject} {key.name} {key.object} already exists",
                key.subject,
            )
            return {}
        if relation is None:
            relation = RelationState(key=key, live=False, changed_version=self.new_version)
            self.relations[key] = relation
        relation.live = True
        relation.created = True
        relation.removed = False
        relation.changed_version = self.new_version
        return {"op": "relate", "subject": key.subject, "name": key.name, "object": key.object}

    def _op_unrelate(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        if not self._relation_endpoints(index, op):
            return {}
        key = RelationKey(op["subject"], op["name"], op["object"])
        relation = self.relations.get(key)
        if relation is None or not relation.live:
            self._fail(
                index,
                "unrelate",
                "unknown_relation",
                f"there is no relation {key.subject} {key.name} {key.object} to remove",
                key.subject,
            )
            return {}
        relation.live = False
        if relation.created:
            relation.created = False  # related and unrelated in one transaction: no row
        else:
            relation.removed = True
        relation.changed_version = self.new_version
        return {"op": "unrelate", "subject": key.subject, "name": key.name, "object": key.object}

    def _op_retire(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = []
        for ref in op["refs"]:
            seq = _event_seq(ref)
            outcome = (
                self._retire_event(index, ref, seq)
                if seq is not None
                else self._retire_frame(index, ref)
            )
            if outcome is not None:
                outcomes.append(outcome)
        return {"op": "retire", "refs": outcomes}

    def _retire_event(self, index: int, ref: str, seq: int) -> dict[str, Any] | None:
        event = self.events.get(seq)
        if event is None:
            self._fail(
                index, "retire", "unknown_ref", f"event {ref} does not exist in this context", ref
            )
            return None
        if not event.is_observation:
            self._fail(
                index,
                "retire",
                "not_observation",
                f"{ref} is a {event.kind} event, not an observation; only observations leave the input",
                ref,
            )
            return None
        if event.request_state == REQUEST_OPEN:
            self._fail(
                index,
                "retire",
                "request_pending",
                f"{ref} is a user request not yet delivered; reply or deliver work naming it "
                f'(delivers: ["{ref}"]) before retiring it',
                ref,
            )
            return None
        if not event.active:
            return {"ref": ref, "status": "retired", "changed": False}
        event.active = False
        event.touched = True
        event.status_version = self.new_version
        self.token_delta -= event.token_estimate
        self.released_tokens += event.token_estimate
        return {
            "ref": ref,
            "status": "retired",
            "changed": True,
            "released_tokens": event.token_estimate,
        }

    def _retire_frame(self, index: int, frame_id: str) -> dict[str, Any] | None:
        frame = self._existing_frame(index, "retire", frame_id)
        if frame is None:
            return None
        if frame.protected:
            self._fail(
                index,
                "retire",
                "frame_protected",
                f"frame {frame_id!r} is protected; unprotect it first",
                frame_id,
            )
            return None
        if frame.status == RETIRED:
            return {"ref": frame_id, "status": RETIRED, "changed": False}
        if frame.status == RETIRING:
            # R14: a repeated retire keeps the original due tick.
            return {
                "ref": frame_id,
                "status": RETIRING,
                "due_tick": frame.retire_due_tick,
                "changed": False,
            }
        frame.retire_generation += 1
        frame.retire_requested = True
        frame.retire_cancelled = False
        frame.retire_requested_tick = self.tick
        frame.retire_due_tick = due_tick_for(self.tick, self.grace_ticks)
        frame.retire_reason = self.reason
        self._touch(frame)
        if self.grace_ticks == 0:
            self._complete_retirement(frame)
            return {"ref": frame_id, "status": RETIRED, "changed": True}
        self._set_status(frame, RETIRING)
        return {
            "ref": frame_id,
            "status": RETIRING,
            "due_tick": frame.retire_due_tick,
            "changed": True,
        }

    def _complete_retirement(self, frame: FrameState) -> None:
        frame.retire_due_tick = None
        frame.retire_requested_tick = None
        self._set_status(frame, RETIRED)

    def _op_restore(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = []
        for ref in op["ids"]:
            seq = _event_seq(ref)
            if seq is not None:
                event = self.events.get(seq)
                if event is None or not event.is_observation:
                    self._fail(
                        index,
                        "restore",
                        "unknown_ref",
                        f"{ref} is not an observation of this context",
                        ref,
                    )
                    continue
                changed = not event.active
                if changed:
                    event.active = True
                    event.touched = True
                    event.status_version = self.new_version
                    self.token_delta += event.token_estimate
                outcomes.append({"ref": ref, "status": "active", "changed": changed})
                continue
            frame = self._existing_frame(index, "restore", ref)
            if frame is None:
                continue
            changed = frame.status != ACTIVE
            if frame.status == RETIRING:
                self._cancel_window(frame)
            elif frame.status == RETIRED:
                self._set_status(frame, ACTIVE)
            if changed:
                self._touch(frame)
            outcomes.append({"ref": ref, "status": ACTIVE, "changed": changed})
        return {"op": "restore", "ids": outcomes}

    def _op_protect(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = []
        for frame_id in op["ids"]:
            frame = self._existing_frame(index, "protect", frame_id)
            if frame is None:
                continue
            if frame.status == RETIRED:
                self._fail(
                    index,
                    "protect",
                    "frame_retired",
                    f"frame {frame_id!r} is retired; restore it before protecting it",
                    frame_id,
                )
                continue
            changed = not frame.protected
            self._cancel_window(frame)
            frame.protected = True
            if changed:
                self._touch(frame)
            outcomes.append({"ref": frame_id, "protected": True, "changed": changed})
        return {"op": "protect", "ids": outcomes}

    def _op_unprotect(self, index: int, op: dict[str, Any]) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = []
        for frame_id in op["ids"]:
            frame = self._existing_frame(index, "unprotect", frame_id)
            if frame is None:
                continue
            changed = frame.protected
            frame.protected = False
            if changed:
                self._touch(frame)
            outcomes.append({"ref": frame_id, "protected": False, "changed": changed})
        return {"op": "unprotect", "ids": outcomes}

    # -- R17 -----------------------------------------------------------------------------

    def _apply_successor_rule(self) -> list[str]:
        """Retire at once every retiring frame that a live successor supersedes and cites."""
        candidates: set[str] = set()
        for frame in self.frames.values():
            if frame.touched:
                candidates.add(frame.frame_id)
                candidates.update(s for s in frame.sources if _event_seq(s) is None)
        for key, relation in self.relations.items():
            if relation.created and key.name == SUPERSEDES:
                candidates.add(key.object)
        missing = {c for c in candidates if c not in self.frames}
        if missing:
            self.frames.update(self.loader.frames(missing))
        retiring = {c for c in candidates if c in self.frames and self.frames[c].status == RETIRING}
        if not retiring:
            return []
        keys = set(self.loader.supersedes_into(retiring))
        keys.update(
            k
            for k, r in self.relations.items()
            if r.created and k.name == SUPERSEDES and k.object in retiring
        )
        live_keys = [k for k in keys if self.relations.get(k) is None or self.relations[k].live]
        successors = {k.subject for k in live_keys} - set(self.frames)
        if successors:
            self.frames.update(self.loader.frames(successors))
        completed: list[str] = []
        for key in sorted(live_keys, key=lambda k: (k.object, k.subject)):
            old = self.frames.get(key.object)
            successor = self.frames.get(key.subject)
            if old is None or successor is None or old.status != RETIRING:
                continue
            if successor.status != RETIRED and old.frame_id in successor.sources:
                old.retire_completed_early = True
                self._touch(old)
                self._complete_retirement(old)
                completed.append(old.frame_id)
        return completed
