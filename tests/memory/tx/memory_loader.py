"""An in-memory `StateLoader` (memory.tx.apply) for rule tests without a database; the
contract test holds it to what `SqlLoader` answers over the same history."""

from __future__ import annotations

from collections.abc import Iterable

from memory.tx.apply import SUPERSEDES, FrameState, RelationKey, RelationState


class MemoryLoader:
    """Frames by id and relations by key, as a transaction's outcome leaves them."""

    def __init__(
        self, frames: Iterable[FrameState] = (), relations: Iterable[RelationKey] = ()
    ) -> None:
        self.frames_by_id = {f.frame_id: f for f in frames}
        self.relations = {
            key: RelationState(key=key, live=True, changed_version=0) for key in relations
        }

    def frames(self, frame_ids: set[str]) -> dict[str, FrameState]:
        return {i: self.frames_by_id[i] for i in frame_ids if i in self.frames_by_id}

    def supersedes_into(self, object_ids: set[str]) -> list[RelationKey]:
        return [
            key
            for key, state in self.relations.items()
            if state.live and key.name == SUPERSEDES and key.object in object_ids
        ]

    def keep(self, frames: dict[str, FrameState], relations: dict[RelationKey, RelationState]):
        """What a committed transaction leaves: its frames and relations, as they now are."""
        self.frames_by_id.update(frames)
        self.relations.update(relations)
