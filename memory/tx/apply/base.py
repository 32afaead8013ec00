"""What every operation of a transaction shares: the working copy and its bookkeeping."""

from __future__ import annotations

import re

from memory.errors import ErrorCode
from memory.kinds import ACTIVE, RETIRING
from memory.shapes.results import OpResult
from memory.tx.apply.state import (
    EventState,
    FrameState,
    OpError,
    RelationKey,
    RelationState,
    StateLoader,
)
from memory.tx.retirement import cancel_window
from memory.vocabulary import seq_of

_BARE_EVENT_REF = re.compile(r"e[1-9][0-9]{0,17}")


def unknown_frame(frame_id: str, what: str = "does not exist in this context") -> str:
    """The message for a frame id that names no frame, with a hint when the id is an event
    ref written without its @ (R59: `retire e58` means @e58)."""
    message = f"frame {frame_id!r} {what}"
    if _BARE_EVENT_REF.fullmatch(frame_id):
        message += f"; an event ref is written with @: @{frame_id}"
    return message


class ApplierBase:
    """The working copy, the per-operation results and errors, and the token accounting."""

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
        self.results: list[OpResult] = []
        self.errors: list[OpError] = []
        self.token_delta = 0
        self.released_tokens = 0
        # Frames a repeated retire named: still retiring, so the receipt lists them too.
        self.retiring_named: set[str] = set()

    # -- helpers -------------------------------------------------------------------------

    def _fail(
        self, index: int, op: str, code: ErrorCode, message: str, ref: str | None = None
    ) -> None:
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
                ErrorCode.UNKNOWN_REF,
                unknown_frame(frame_id),
                frame_id,
            )
        return frame

    def _touch(self, frame: FrameState) -> None:
        frame.touched = True
        frame.changed_version = self.new_version

    def _resolve_source(self, index: int, op: str, ref: str) -> bool:
        seq = seq_of(ref)
        if seq is not None:
            if seq not in self.events:
                self._fail(
                    index,
                    op,
                    ErrorCode.UNKNOWN_REF,
                    f"event {ref} does not exist in this context",
                    ref,
                )
                return False
            return True
        if ref not in self.frames:
            self._fail(index, op, ErrorCode.UNKNOWN_REF, unknown_frame(ref), ref)
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
            cancel_window(frame)
            self._set_status(frame, ACTIVE)
