"""derive, revise, relate and unrelate (R4, R5, R10)."""

from __future__ import annotations

from typing import Any, Literal

from memory.errors import ErrorCode
from memory.kinds import ACTIVE, RETIRED, RETIRING
from memory.shapes.results import FrameWritten, RelationChanged
from memory.tokens import estimate_frame_tokens
from memory.tx.apply.base import ApplierBase, unknown_frame
from memory.tx.apply.state import FrameState, RelationKey, RelationState


class FrameOperations(ApplierBase):
    def _op_derive(self, index: int, op: dict[str, Any]) -> FrameWritten | None:
        frame_id = op["id"]
        existing = self._frame(frame_id)
        if existing is not None:
            earlier = existing.created_version == self.new_version
            self._fail(
                index,
                "derive",
                ErrorCode.FRAME_EXISTS,
                f"frame {frame_id!r} is derived by an earlier operation of this transaction; "
                "derive it once"
                if earlier
                else f"frame {frame_id!r} already exists (status {existing.status}, revision "
                f"{existing.revision}); ids are unique forever: revise it or pick another id",
                frame_id,
            )
            return None
        sources = list(dict.fromkeys(op.get("from", [])))
        if frame_id in sources:
            self._fail(
                index,
                "derive",
                ErrorCode.SELF_CITATION,
                f"frame {frame_id!r} cannot cite itself",
                frame_id,
            )
            return None
        if not all(self._resolve_source(index, "derive", ref) for ref in sources):
            return None
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
        return _written("derive", self.frames[frame_id])

    def _op_revise(self, index: int, op: dict[str, Any]) -> FrameWritten | None:
        frame_id = op["id"]
        frame = self._frame(frame_id)
        if frame is None:
            self._fail(
                index,
                "revise",
                ErrorCode.UNKNOWN_REF,
                unknown_frame(frame_id, "does not exist; derive it first"),
                frame_id,
            )
            return None
        if frame.status == RETIRED:
            self._fail(
                index,
                "revise",
                ErrorCode.FRAME_RETIRED,
                f"frame {frame_id!r} is retired; restore it first (restore then revise may "
                "stand in the same transaction)",
                frame_id,
            )
            return None
        new_sources = [s for s in dict.fromkeys(op.get("from", [])) if s not in frame.sources]
        if frame_id in new_sources:
            self._fail(
                index,
                "revise",
                ErrorCode.SELF_CITATION,
                f"frame {frame_id!r} cannot cite itself",
                frame_id,
            )
            return None
        if not all(self._resolve_source(index, "revise", ref) for ref in new_sources):
            return None
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
        result = _written("revise", frame)
        if cancelled:
            result["retirement_cancelled"] = True
        return result

    def _relation_key(self, index: int, op: dict[str, Any]) -> RelationKey | None:
        """The relation `op` names, or None after recording `unknown_ref` for each of its
        ends that names no frame."""
        ends = (op["subject"], op["object"])
        missing = [end for end in ends if self._existing_frame(index, op["op"], end) is None]
        return None if missing else RelationKey(op["subject"], op["name"], op["object"])

    def _op_relate(self, index: int, op: dict[str, Any]) -> RelationChanged | None:
        key = self._relation_key(index, op)
        if key is None:
            return None
        relation = self.relations.get(key)
        if relation is not None and relation.live:
            self._fail(
                index,
                "relate",
                ErrorCode.RELATION_EXISTS,
                f"relation {key.subject} {key.name} {key.object} already exists",
                key.subject,
            )
            return None
        if relation is None:
            relation = RelationState(key=key, live=False, changed_version=self.new_version)
            self.relations[key] = relation
        relation.live = True
        relation.created = True  # `removed` stays: a row unrelated earlier here still goes
        relation.changed_version = self.new_version
        return _changed("relate", key)

    def _op_unrelate(self, index: int, op: dict[str, Any]) -> RelationChanged | None:
        key = self._relation_key(index, op)
        if key is None:
            return None
        relation = self.relations.get(key)
        if relation is None or not relation.live:
            self._fail(
                index,
                "unrelate",
                ErrorCode.UNKNOWN_RELATION,
                f"there is no relation {key.subject} {key.name} {key.object} to remove",
                key.subject,
            )
            return None
        relation.live = False
        if relation.created:
            relation.created = False  # related and unrelated in one transaction: no row
        else:
            relation.removed = True
        relation.changed_version = self.new_version
        return _changed("unrelate", key)


def _written(op: Literal["derive", "revise"], frame: FrameState) -> FrameWritten:
    return {
        "op": op,
        "id": frame.frame_id,
        "revision": frame.revision,
        "status": frame.status,
        "tokens": frame.token_estimate,
    }


def _changed(op: Literal["relate", "unrelate"], key: RelationKey) -> RelationChanged:
    return {"op": op, "subject": key.subject, "name": key.name, "object": key.object}
