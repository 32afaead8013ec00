"""Replay (R51): the state rebuilt from the history alone equals the stored state."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from memory.contexts import create_context
from memory.demo.player import DemoPlayer
from memory.errors import MorphzError
from memory.models import Context
from memory.versions.replay import verify_context
from tests.memory.conftest import Agent


@pytest.fixture
def demo(db: Any) -> Context:
    context = create_context("demo", name="demo")
    DemoPlayer(context).play()
    context.refresh_from_db()
    return context


def test_the_demo_loaded_by_the_command_verifies(
    db: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MORPHZ_DATA_DIR", str(tmp_path))
    call_command("load_demo", stdout=StringIO())
    out = StringIO()
    call_command("verify_context", "demo", stdout=out)
    assert out.getvalue().startswith("demo: OK")
    assert verify_context(Context.objects.get(slug="demo")) == []


def test_the_demo_story_verifies(demo: Context) -> None:
    assert verify_context(demo) == []
    out = StringIO()
    call_command("verify_context", "demo", stdout=out)
    assert out.getvalue().startswith("demo: OK")


@pytest.mark.no_replay_check("it changes stored state behind the engine to see it reported")
@pytest.mark.parametrize(
    ("sql", "where"),
    [
        (
            "UPDATE memory_frame SET body = '{\"goal\": \"other\"}' WHERE frame_id = 'release'",
            "frames.release.body",
        ),
        (
            "UPDATE memory_frame SET status = 'active', retire_due_tick = NULL "
            "WHERE frame_id = 'release-case-a'",
            "frames.release-case-a.status",
        ),
        ("UPDATE memory_event SET active = true WHERE seq = 42", "events.42"),
        ("UPDATE memory_context SET used_tokens = used_tokens + 1", "counters.used_tokens"),
        ("UPDATE memory_relation SET removed_version = 50 WHERE name = 'supersedes'", "relations"),
    ],
)
def test_a_state_the_history_does_not_explain_is_reported(
    demo: Context, sql: str, where: str
) -> None:
    with connection.cursor() as cur:
        cur.execute(sql)
    differences = verify_context(demo)
    assert differences and any(d.startswith(where) for d in differences), differences
    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("verify_context", "demo", stdout=out)
    assert exited.value.code == 1
    assert "difference" in out.getvalue()


def test_threads_continuations_and_successors_verify(release_frame: Agent) -> None:
    agent = release_frame
    agent.observe("side work", thread="side")
    agent.observe("main work")
    agent.evaluate(thread="main")
    agent.evaluate(continuation=True)
    agent.evaluate()
    agent.commit("(context-tx (derive old-plan (goal a)) (derive note (x y)))")
    agent.commit("(context-tx (retire old-plan))")
    agent.commit(
        "(context-tx (derive new-plan (from old-plan) (goal b))"
        " (relate new-plan supersedes old-plan))"
    )
    agent.commit("(context-tx (retire note))")
    agent.advance_ticks(9)  # note expires
    with pytest.raises(MorphzError):
        agent.commit("(context-tx (revise nothing (a b)))")
    assert verify_context(agent.refresh()) == []
