"""An event root's seq is not a frame pk: recall from @e2 never follows the sources or the
relations of the frame whose pk is 2 (the walk's parts look frames up by pk)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection

from memory.models import Frame
from memory.recall.graph import recall
from tests.memory.conftest import Agent

LAST_VALUE = "pg_sequence_last_value(%s::regclass)"


@pytest.fixture
def frame_2(release_team: Agent) -> Iterator[Agent]:
    """@e1 and @e2, frame `decoy` with pk 2 (citing @e1, related to `other` both ways), and
    `reader` citing @e2."""
    agent = release_team
    if Frame.objects.filter(pk__lt=100).exists():
        pytest.skip("frames with small pks exist in this database")
    agent.observe("first log")
    assert agent.observe("second log") == "@e2"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence('memory_frame', 'id')")
        (sequence,) = cursor.fetchone()
        cursor.execute(f"SELECT {LAST_VALUE}", [sequence])
        (before,) = cursor.fetchone()
        cursor.execute("SELECT setval(%s, 1)", [sequence])
    try:
        agent.commit(
            "(context-tx (derive decoy (from @e1) (n 1)) (derive other (n 2))"
            " (relate decoy leads-to other) (relate other leads-to decoy))"
        )
        agent.commit("(context-tx (derive reader (from @e2) (n 3)))")
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT setval(%s, greatest(%s, {LAST_VALUE}))",
                           [sequence, before, sequence])  # fmt: skip
    assert agent.frame("decoy").pk == 2
    yield agent


@pytest.mark.parametrize(
    ("direction", "expected"),
    [("ancestors", ["@e2"]), ("descendants", ["@e2", "reader"]), ("both", ["@e2", "reader"])],
)
def test_only_the_frames_citing_the_event_follow_it(
    frame_2: Agent, direction: str, expected: list[str]
) -> None:
    result = recall(frame_2.context, frame_id="@e2", direction=direction, depth=1)
    assert [(n["id"] if n["type"] == "frame" else n["ref"]) for n in result["nodes"]] == expected
