"""Applying a context transaction's operations to a working copy of the cognitive state.

How it works: docs/internals.md, section `memory/tx/apply/__init__.py`."""

from __future__ import annotations

from typing import Any

from memory.tx.apply.frames import FrameOperations
from memory.tx.apply.state import (
    SUPERSEDES,
    ApplyOutcome,
    ConflictItem,
    EventState,
    FrameState,
    RelationKey,
    RelationState,
    find_conflicts,
    referenced_items,
)
from memory.tx.apply.status import StatusOperations

__all__ = [
    "SUPERSEDES",
    "ApplyOutcome",
    "ConflictItem",
    "EventState",
    "FrameState",
    "RelationKey",
    "RelationState",
    "TransactionApplier",
    "find_conflicts",
    "referenced_items",
]


class TransactionApplier(FrameOperations, StatusOperations):
    """Applies operations in order; a later operation sees the earlier ones (R10)."""

    def apply(self, ops: list[dict[str, Any]]) -> ApplyOutcome:
        """Apply `ops` (the JSON form's operations) in order to the working copy, then the
        successor rule (R17) if none failed. Raises nothing for a broken rule: each failure
        is an `OpError` in `outcome.errors` (R11), and `outcome.results` holds the results of
        the operations that did not fail (one per operation when none did). Token counts are
        estimates in tokens. Writes nothing: the engine writes the outcome."""
        for index, op in enumerate(ops):
            handler = getattr(self, f"_op_{op['op']}")
            errors_before = len(self.errors)
            result = handler(index, op)
            if len(self.errors) == errors_before:
                self.results.append(result)
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
            retiring_named=self.retiring_named,
        )
