"""A commit's rows carry one timestamp, Python's clock at the commit, to the microsecond and
in UTC: the transaction event, its record, the revisions it wrote and its search index
intents (like every other event write, so time filters order them all alike)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.utils import timezone

from memory.contexts import create_context
from memory.timeline.events import append_event
from memory.tx.engine import submit_transaction


def test_every_row_of_a_commit_has_the_commit_time(db):
    context = create_context("clocked")
    append_event(context.pk, kind="tool_result", content="output")
    before = timezone.now()
    result = submit_transaction(
        context.pk, text="(context-tx (derive a (x 1)) (derive b (from a) (x 2)) (retire @e1))"
    )
    after = timezone.now()
    with connection.cursor() as cur:
        cur.execute(
            "SELECT e.created_at, t.created_at FROM memory_transactionrecord t "
            "JOIN memory_event e ON e.id = t.event_id WHERE t.id = %s",
            [result.record_id],
        )
        event_at, record_at = cur.fetchone()
        cur.execute(
            "SELECT created_at FROM memory_framerevision WHERE transaction_id = %s",
            [result.record_id],
        )
        revisions_at = {at for (at,) in cur.fetchall()}
        cur.execute(
            "SELECT created_at FROM memory_indexintent WHERE context_id = %s AND created_at >= %s",
            [context.pk, before],
        )
        intents_at = {at for (at,) in cur.fetchall()}
    assert before <= event_at <= after
    assert event_at.utcoffset() == timedelta(0)
    assert record_at == event_at
    assert revisions_at == {event_at}
    assert intents_at == {event_at}  # a, b, @e1 and the transaction event


def test_microseconds_are_kept(db):
    context = create_context("microseconds")
    stamps = set()
    for n in range(5):
        result = submit_transaction(context.pk, text=f"(context-tx (derive f{n} (x 1)))")
        stamps.add(result.record.created_at.microsecond)
    assert stamps != {0}
