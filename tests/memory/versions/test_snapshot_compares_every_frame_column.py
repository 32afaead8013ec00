"""Replay compares every column a frame stores: the snapshot's frame shape is written out
field by field, so a column added to the registry must be added to it too."""

from __future__ import annotations

from memory.shapes.exports import SnapshotFrame
from memory.sql.columns import FRAME_LOADED


def test_the_snapshot_frame_holds_every_stored_column_but_ids() -> None:
    compared = {
        "token_estimate" if key == "tokens" else key for key in SnapshotFrame.__annotations__
    }
    assert set(FRAME_LOADED) - {"id", "frame_id"} <= compared
