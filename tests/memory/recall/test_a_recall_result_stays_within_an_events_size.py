"""A recall appended as an observation is an event, held to an event's size: one whose
text would pass MAX_CONTENT_CHARS (a recall of a 4 MB event with its text) is refused with
413 `too_large` naming both sizes, and nothing is appended; read_event reads it in parts."""

from __future__ import annotations

import pytest

from memory.errors import MorphzError
from memory.limits import MAX_CONTENT_CHARS
from memory.models import Event
from memory.recall.graph import recall
from tests.memory.conftest import Agent


def test_a_recall_result_over_an_events_size_is_refused(release_team: Agent) -> None:
    agent = release_team
    ref = agent.observe("x" * (MAX_CONTENT_CHARS - 10))
    agent.commit(f"(context-tx (derive log-notes (from {ref}) (n 1)))")
    events = Event.objects.filter(context=agent.context).count()

    with pytest.raises(MorphzError) as refused:
        recall(agent.context, frame_id=ref, include_events=True, as_observation=True)

    assert refused.value.code == "too_large" and refused.value.status == 413
    assert refused.value.details[0]["limit_chars"] == MAX_CONTENT_CHARS
    assert Event.objects.filter(context=agent.context).count() == events
    kept = recall(agent.context, frame_id=ref, as_observation=True)
    assert kept["observation"]["ref"]
