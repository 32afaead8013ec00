"""Settings are part of the history (R51, R52): replay, as-of reads, forks and export apply
the settings in force at each point, not the present ones."""

from __future__ import annotations

from pathlib import Path

from django.db import connection

from memory.contexts import update_context_settings
from memory.models import Frame, SettingsChange
from memory.sql import named_row
from memory.versions.exchange import export_context, import_context
from memory.versions.forks import fork_context
from memory.versions.points import as_of_sql, resolve_point
from memory.versions.replay import verify_context
from tests.memory.conftest import Agent


def _story(agent: Agent) -> int:
    """Grace 8 for `a`, then grace 2 for `b`; returns the version the change was made at."""
    agent.commit("(context-tx (derive a (x 1)) (derive b (x 2)))")
    agent.commit("(context-tx (retire a))")
    before = agent.version
    update_context_settings(agent.context.pk, grace_ticks=2)
    agent.commit("(context-tx (retire b))")
    agent.advance_ticks(3)
    return before


def test_a_grace_change_replays_with_the_grace_in_force(release_team: Agent) -> None:
    _story(release_team)
    a, b = release_team.frame("a"), release_team.frame("b")
    assert (a.status, a.retire_due_tick) == ("retiring", 8)
    assert b.status == "retired"
    kinds = list(
        SettingsChange.objects.filter(context=release_team.context).values_list("kind", flat=True)
    )
    assert kinds == ["created", "changed"]
    assert verify_context(release_team.refresh()) == []


def test_a_capacity_change_into_maintenance_replays(release_team: Agent) -> None:
    release_team.observe("word " * 400)
    release_team.evaluate()
    update_context_settings(release_team.context.pk, capacity_tokens=300)
    assert release_team.refresh().in_maintenance
    release_team.observe("more")
    update_context_settings(release_team.context.pk, capacity_tokens=100_000)
    assert not release_team.refresh().in_maintenance
    assert verify_context(release_team.context) == []


def test_as_of_forks_and_exports_use_the_settings_of_the_point(
    release_team: Agent, tmp_path: Path
) -> None:
    changed_at = _story(release_team)
    context = release_team.refresh()

    def grace_as_of(version: int) -> int:
        with connection.cursor() as cur:
            cur.execute(as_of_sql("context_at"), resolve_point(context, version).params())
            at = named_row(cur)
        assert at is not None
        return int(at["grace_ticks"])

    # the change came after commit `changed_at`: "as of" a version means its end
    assert (grace_as_of(changed_at - 1), grace_as_of(changed_at)) == (8, 2)
    fork = fork_context(context, slug="rt-before", at_version=changed_at - 1).context
    assert fork.grace_ticks == 8
    assert verify_context(fork) == []
    assert verify_context(fork_context(context, slug="rt-now").context) == []

    path = tmp_path / "rt.jsonl.gz"
    export_context(context, path)
    copy = import_context(path, slug="rt-copy").context
    assert copy.grace_ticks == 2
    assert Frame.objects.get(context=copy, frame_id="a").retire_due_tick == 8
    assert verify_context(copy) == []
