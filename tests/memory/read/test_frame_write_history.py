"""A frame's write history: the transactions that derived and revised it (R32)."""

from __future__ import annotations

import pytest

from memory.errors import NotFound
from memory.models import TransactionRecord
from memory.read.history import frame_write_history


def test_derive_and_each_revise_with_text_base_and_committed_version(release_frame, first_example):
    agent = release_frame
    base = agent.version
    agent.commit(first_example.format(base=base))
    agent.commit(
        "(context-tx (relate release depends-on test-result))"
    )  # touches, but writes no body
    agent.commit(
        f"(context-tx (base-version {agent.version}) (revise release (goal ship-v1) (stage shipped)))"
    )
    history = frame_write_history(agent.context, "release")
    assert [h["revision"] for h in history] == [1, 2, 3]
    assert [h["op"] for h in history] == ["derive", "revise", "revise"]
    assert [h["version"] for h in history] == [1, 2, 4]
    assert history[1]["base_version"] == base
    assert history[1]["body"] == {"goal": "ship-v1", "stage": "packaging"}
    assert history[0]["body"] == {"goal": "ship-v1", "stage": "waiting-for-tests"}
    assert "(revise release (goal ship-v1) (stage packaging))" in history[1]["text"]
    assert history[1]["reason"] == "测试结果已吸收，继续准备发布"
    record = TransactionRecord.objects.get(pk=history[2]["transaction_id"])
    assert record.committed_version == 4 and history[2]["text"] == record.text
    assert history[2]["event_ref"] == record.event.ref


def test_sources_at_each_write_are_kept(release_frame, first_example):
    release_frame.commit(first_example.format(base=release_frame.version))
    (derived,) = frame_write_history(release_frame.context, "test-result")
    assert derived["sources"] == ["@e42"]
    assert derived["author"] == "system"


def test_history_survives_retirement_and_restore(release_frame):
    agent = release_frame
    agent.commit(
        "(context-tx (derive case (x 1)) (derive successor (from case) (y 1))"
        " (relate successor supersedes case) (retire case))"
    )
    agent.commit("(context-tx (restore case) (revise case (x 2)))")
    history = frame_write_history(agent.context, "case")
    assert [(h["op"], h["body"]) for h in history] == [
        ("derive", {"x": "1"}),
        ("revise", {"x": "2"}),
    ]


def test_unknown_frame_is_not_found(release_team):
    with pytest.raises(NotFound):
        frame_write_history(release_team.context, "nothing-here")
