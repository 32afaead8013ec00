"""A scratch context (an import's or replay's context under construction) is never listed,
and one whose builder died (a SIGKILLed import) is removed at the next start or the next
import or replay, while a live builder's is left alone (issue 35: a killed import left
14,000-50,001 events in a context shown to staff)."""

from __future__ import annotations

import time
from typing import Any

import psycopg
from django.db import connection

from memory.contexts import create_context
from memory.models import Context
from memory.read.access import context_for_person, contexts_for_person
from memory.tx.engine import submit_transaction
from memory.versions.replay import SCRATCH_LOCK, building_scratch, purge_abandoned_scratch
from morphz.devserver import database_url


class Staff:
    is_authenticated = True
    is_active = True
    is_staff = True


def test_a_scratch_context_is_never_listed(db: Any) -> None:
    create_context("real")
    scratch = create_context("import-0123456789ab", scratch=True)
    assert [c.slug for c in contexts_for_person(Staff())] == ["real"]
    assert context_for_person(scratch.slug, Staff()) is None


def test_a_scratch_context_whose_builder_died_is_removed(db: Any) -> None:
    scratch = create_context("import-abandoned00", scratch=True)  # nobody holds its lock
    submit_transaction(scratch.pk, text="(context-tx (derive left (a b)))")
    assert purge_abandoned_scratch() == ["import-abandoned00"]
    assert not Context.objects.filter(pk=scratch.pk).exists()


def test_a_live_builders_scratch_context_is_left_alone(transactional_db: Any) -> None:
    scratch = create_context("replay-alive000000", scratch=True)
    with psycopg.connect(database_url(connection.settings_dict), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [SCRATCH_LOCK, scratch.pk])
        row = other.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None
        assert purge_abandoned_scratch() == []
        assert Context.objects.filter(pk=scratch.pk).exists()
    ended(row[0])
    assert purge_abandoned_scratch() == ["replay-alive000000"]  # its session ended


def ended(pid: int) -> None:
    """Wait until the server has ended the session `pid` (a client's close returns before
    the server releases that session's locks)."""
    deadline = time.monotonic() + 10
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.01)
    raise AssertionError(f"session {pid} still alive after 10 s")


def test_a_finished_build_leaves_nothing(transactional_db: Any) -> None:
    with building_scratch("replay", {}) as scratch:
        assert Context.objects.get(pk=scratch.pk).scratch
    assert not Context.objects.filter(pk=scratch.pk).exists()
