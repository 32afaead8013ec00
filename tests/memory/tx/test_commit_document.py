"""The document a commit stores gives a frame's state by the column registry's names, in its
order (`morphz_write_commit` reads them by name)."""

from __future__ import annotations

from memory.sql.columns import FRAME_STATE
from memory.tx.store import FrameStateRow


def test_a_frame_state_row_holds_the_registry_columns_in_order() -> None:
    assert tuple(FrameStateRow.__annotations__) == FRAME_STATE
