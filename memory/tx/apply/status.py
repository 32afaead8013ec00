"""retire, restore, protect, unprotect and the successor rule (R13–R18).

The retirement window itself (opening, cancelling, closing) is `memory.tx.retirement`'s;
these operations decide when to call it and keep the token accounting.
"""

from __future__ import annotations

from typing import Any, Literal

from memory.errors import ErrorCode
from memory.kinds import ACTIVE, REQUEST_OPEN, RETIRED, RETIRING
from memory.shapes.results import (
    Protected,
    ProtectedRef,
    Restored,
    RestoredRef,
    Retired,
    RetiredRef,
)
from memory.tx.apply.base import ApplierBase
from memory.tx.apply.state import SUPERSEDES, FrameState
from memory.tx.retirement import close_window, open_window
from memory.vocabulary import seq_of


class StatusOperations(ApplierBase):
    def _op_retire(self, index: int, op: dict[str, Any]) -> Retired:
        outcomes: list[RetiredRef] = []
        for ref in op["refs"]:
            seq = seq_of(ref)
            outcome = (
                self._retire_event(index, ref, seq)
                if seq is not None
                else self._retire_frame(index, ref)
            )
            if outcome is not None:
                outcomes.append(outcome)
        return {"op": "retire", "refs": outcomes}

    def _retire_event(self, index: int, ref: str, seq: int) -> RetiredRef | None:
        event = self.events.get(seq)
        if event is None:
            self._fail(
                index,
                "retire",
                ErrorCode.UNKNOWN_REF,
                f"event {ref} does not exist in this context",
                ref,
            )
            return None
        if not event.is_observation:
            self._fail(
                index,
                "retire",
                ErrorCode.NOT_OBSERVATION,
                f"{ref} is a {event.kind} event, not an observation; only observations leave the input",
                ref,
            )
            return None
        if event.request_state == REQUEST_OPEN:
            self._fail(
                index,
                "retire",
                ErrorCode.REQUEST_PENDING,
                f"{ref} is a user request not yet delivered; deliver it first: write (delivers "
                f"{ref}) in the reply that answers it (that reply may retire it too)",
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

    def _retire_frame(self, index: int, frame_id: str) -> RetiredRef | None:
        frame = self._existing_frame(index, "retire", frame_id)
        if frame is None:
            return None
        if frame.protected:
            self._fail(
                index,
                "retire",
                ErrorCode.FRAME_PROTECTED,
                f"frame {frame_id!r} is protected; unprotect it first",
                frame_id,
            )
            return None
        if frame.status == RETIRED:
            return {"ref": frame_id, "status": RETIRED, "changed": False}
        if frame.status == RETIRING:
            # R14: a repeated retire keeps the original due tick.
            self.retiring_named.add(frame_id)
            return {
                "ref": frame_id,
                "status": RETIRING,
                "due_tick": frame.retire_due_tick,
                "changed": False,
            }
        status = open_window(
            frame, tick=self.tick, grace_ticks=self.grace_ticks, reason=self.reason
        )
        self._touch(frame)
        if status == RETIRED:
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
        close_window(frame)
        self._set_status(frame, RETIRED)

    def _op_restore(self, index: int, op: dict[str, Any]) -> Restored:
        outcomes: list[RestoredRef] = []
        for ref in op["ids"]:
            seq = seq_of(ref)
            if seq is not None:
                event = self.events.get(seq)
                if event is None or not event.is_observation:
                    self._fail(
                        index,
                        "restore",
                        ErrorCode.UNKNOWN_REF,
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

    def _op_protect(self, index: int, op: dict[str, Any]) -> Protected:
        return self._set_protected(index, op, True)

    def _op_unprotect(self, index: int, op: dict[str, Any]) -> Protected:
        return self._set_protected(index, op, False)

    def _set_protected(self, index: int, op: dict[str, Any], protect: bool) -> Protected:
        """protect or unprotect each frame of `op`; a retired frame cannot be protected and a
        protected one has no retirement window (R15)."""
        name: Literal["protect", "unprotect"] = "protect" if protect else "unprotect"
        outcomes: list[ProtectedRef] = []
        for frame_id in op["ids"]:
            frame = self._existing_frame(index, name, frame_id)
            if frame is None:
                continue
            if protect and frame.status == RETIRED:
                self._fail(
                    index,
                    name,
                    ErrorCode.FRAME_RETIRED,
                    f"frame {frame_id!r} is retired; restore it before protecting it",
                    frame_id,
                )
                continue
            changed = frame.protected != protect
            cancelled = protect and frame.status == RETIRING
            if protect:
                self._cancel_window(frame)
            frame.protected = protect
            if changed:
                self._touch(frame)
            outcome: ProtectedRef = {"ref": frame_id, "protected": protect, "changed": changed}
            if cancelled:
                outcome["retirement_cancelled"] = True
            outcomes.append(outcome)
        return {"op": name, "ids": outcomes}

    # -- R17 -----------------------------------------------------------------------------

    def _apply_successor_rule(self) -> list[str]:
        """Retire at once every retiring frame that a live successor supersedes and cites."""
        candidates: set[str] = set()
        for frame in self.frames.values():
            if frame.touched:
                candidates.add(frame.frame_id)
                candidates.update(s for s in frame.sources if seq_of(s) is None)
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
